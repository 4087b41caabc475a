#include "comm/group.h"

#include <thread>
#include <vector>

namespace tccl {

namespace {

struct CommWork {
  std::shared_ptr<Communicator> comm;
  HostStream* stream = nullptr;
  std::vector<std::function<Status()>> collectives;
  std::vector<P2POp> p2p;

  Status Run() const {
    for (const auto& c : collectives) TCCL_RETURN_IF_ERROR(c());
    return p2p.empty() ? Status::Ok() : comm->RunP2P(p2p);
  }
};

struct GroupState {
  int depth = 0;
  std::vector<CommWork> work;  // in order of first appearance

  CommWork& For(const std::shared_ptr<Communicator>& comm, HostStream* stream) {
    for (CommWork& w : work)
      if (w.comm == comm) return w;
    work.push_back(CommWork{comm, stream, {}, {}});
    return work.back();
  }
};

thread_local GroupState t_group;

}  // namespace

bool InGroup() { return t_group.depth > 0; }
void GroupStart() { ++t_group.depth; }

void GroupAddCollective(std::shared_ptr<Communicator> comm, HostStream* stream, std::function<Status()> run) {
  t_group.For(comm, stream).collectives.push_back(std::move(run));
}

void GroupAddP2P(std::shared_ptr<Communicator> comm, HostStream* stream, const P2POp& op) {
  t_group.For(comm, stream).p2p.push_back(op);
}

Status GroupEnd() {
  if (t_group.depth == 0) return InvalidUsage("tcclGroupEnd without a matching tcclGroupStart");
  if (--t_group.depth > 0) return Status::Ok();
  std::vector<CommWork> work;
  work.swap(t_group.work);
  std::vector<CommWork*> blocking;
  for (CommWork& w : work) {
    if (w.stream) {
      CommWork copy = w;
      w.stream->Enqueue([copy] { return copy.Run(); });
    } else {
      blocking.push_back(&w);
    }
  }
  if (blocking.size() == 1) return blocking[0]->Run();
  std::vector<Status> results(blocking.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < blocking.size(); ++i) threads.emplace_back([&, i] { results[i] = blocking[i]->Run(); });
  for (auto& t : threads) t.join();
  for (const Status& st : results) TCCL_RETURN_IF_ERROR(st);
  return Status::Ok();
}

}  // namespace tccl
