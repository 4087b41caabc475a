// Group semantics (tcclGroupStart/End), as NCCL: calls between them are queued per thread and run
// at the outermost tcclGroupEnd — each communicator's collectives in call order, then all its
// sends and receives together as one step (so matching send/recv pairs cannot deadlock). When a
// group spans several communicators (one thread driving several ranks) they run concurrently.
#pragma once

#include <functional>
#include <memory>

#include "comm/communicator.h"
#include "comm/host_stream.h"

namespace tccl {

bool InGroup();
void GroupStart();
Status GroupEnd();
void GroupAddCollective(std::shared_ptr<Communicator> comm, HostStream* stream, std::function<Status()> run);
void GroupAddP2P(std::shared_ptr<Communicator> comm, HostStream* stream, const P2POp& op);

}  // namespace tccl
