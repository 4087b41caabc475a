// The executor's forward (src/exec/executor.cc, StartForward): a receive-and-reduce whose result a
// send of its step sends on to the same peer hands each reduced piece straight to that send's
// window in the connection's buffer. Here one rank runs that step against a scripted connection,
// which delivers the incoming message in fixed pieces and offers, shortens or refuses the send's
// window call by call, so every interleaving of forwarded and plain pieces is reached on purpose
// (the multi-rank tests reach them only by timing). Whatever the script, the peer must get the
// tag and then exactly the reduced data, and the result must be in its place.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/generators.h"
#include "exec/executor.h"
#include "exec/op_tag.h"

namespace tccl {
namespace {

// One peer's end of a byte stream in each direction. Incoming: `in` (a tag and a payload), given
// at most `piece` bytes per TryRecv. Outgoing: `out`, appended by TrySend (at most `sendPiece`
// bytes per call) and by what the window (a place in `out` past its end) was written with; window call
// k offers `windows[k]` bytes (0: refused; past the list's end: the last entry).
class ScriptedConnection : public Connection {
 public:
  ScriptedConnection(std::vector<unsigned char> in, size_t piece, size_t sendPiece, std::vector<size_t> windows,
                     bool streamed, bool streamWindow)
      : in_(std::move(in)),
        piece_(piece),
        sendPiece_(sendPiece),
        windows_(std::move(windows)),
        streamed_(streamed),
        streamWindow_(streamWindow) {
    out_.assign(1 << 20, 0);
  }

  // `data` is the message's start, as for every connection; `done` of it is sent.
  Status TrySend(const void* data, size_t done, size_t total, size_t* taken) override {
    const size_t n = std::min(total - done, sendPiece_);
    memcpy(out_.data() + outEnd_, static_cast<const unsigned char*>(data) + done, n);
    outEnd_ += n;
    *taken = n;
    return Status::Ok();
  }

  Status TryRecv(const RecvSink& sink, size_t done, size_t total, size_t* delivered) override {
    size_t n = std::min({total - done, piece_, sink.maxBytes, in_.size() - inAt_});
    n -= n % sink.granularity;
    const unsigned char* frag = in_.data() + inAt_;
    if (sink.direct) {
      memcpy(static_cast<unsigned char*>(sink.direct) + done, frag, n);
    } else if (streamed_ && sink.consumeStreamed) {
      sink.consumeStreamed(sink.ctx, frag, done, n);
      std::atomic_thread_fence(std::memory_order_seq_cst);  // orders the streaming stores, as shm's fence
    } else {
      sink.consume(sink.ctx, frag, done, n);
    }
    inAt_ += n;
    *delivered = n;
    return Status::Ok();
  }

  void* SendWindow(size_t done, size_t total, size_t* bytes, bool* stream) override {
    *stream = streamWindow_;
    const size_t k = windowCalls_++;
    const size_t offer = windows_.empty() ? 0 : windows_[std::min(k, windows_.size() - 1)];
    *bytes = std::min(offer, total - done);
    offered_ = *bytes;
    return *bytes ? out_.data() + outEnd_ : nullptr;
  }
  void SendWritten(size_t n) override {
    overran_ |= n > offered_;
    offered_ = 0;
    outEnd_ += n;
  }
  const char* Kind() const override { return "scripted"; }

  std::vector<unsigned char> Sent() const { return {out_.begin(), out_.begin() + (long)outEnd_}; }
  // Whether more was written into a window than it offered.
  bool Overran() const { return overran_; }

 private:
  std::vector<unsigned char> in_;
  size_t inAt_ = 0;
  size_t piece_;
  size_t sendPiece_;
  std::vector<size_t> windows_;
  size_t windowCalls_ = 0;
  size_t offered_ = 0;
  bool overran_ = false;
  bool streamed_;       // calls consumeStreamed where the sink has one (final places past the cache)
  bool streamWindow_;   // asks for the window to be written with streaming stores
  std::vector<unsigned char> out_;
  size_t outEnd_ = 0;
};

struct Script {
  const char* name;
  size_t piece;                 // bytes the connection delivers per receive call
  std::vector<size_t> windows;  // the send's window, call by call
  size_t forwarded;             // bytes that must go through the window
  size_t earlierSend = 0;       // bytes of a send to the same peer ahead of the forwarded one
  size_t sendPiece = 4096;      // bytes the connection takes per send call
};

void Append(std::vector<unsigned char>* v, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  v->insert(v->end(), b, b + n);
}

// 4096 floats (16 KiB, above the size a send is staged at, so the send may be forwarded) received
// in 4 KiB pieces, reduced with this rank's own, and sent on.
TEST(ExecuteForward, ThePeerGetsTheTagThenExactlyTheReducedDataWhateverTheWindows) {
  constexpr size_t kCount = 4096, kBytes = kCount * sizeof(float), kPiece = 4096;
  const std::vector<Script> scripts = {
      {"a window for every piece", kPiece, {kPiece}, kBytes},
      {"no window", kPiece, {0}, 0},
      {"windows shorter than a piece, not a whole element", kPiece, {3001}, kBytes},
      // The send has sent one piece and the receive has taken two when the windows come back: the
      // forward must not resume (what the window would hold is not what the send sends next), so
      // the rest is received into its place and sent from there once the reduce is done.
      {"a window, none, then windows again", kPiece, {kPiece, 0, kPiece}, kPiece},
      {"none, then windows", kPiece, {0, kPiece}, 0},
      // Room for less than one element is no window: the piece is received into its place.
      {"a window smaller than an element, then windows", kPiece, {2, kPiece}, 0},
      {"a window for a whole message at once", kBytes, {kBytes}, kBytes},
      // Another send to the peer is ahead on the stream, sent 4 KiB per call: nothing may enter
      // the stream before it is out, so the first piece is received into its place, and the rest
      // with it (the lockstep above).
      {"behind another send", kPiece, {kPiece}, 0, 3 * kPiece},
      // The send's tag goes out in two calls: the first piece arrives before it is out.
      {"a tag that takes two calls", kPiece, {kPiece}, 0, 0, 20},
  };
  for (const Script& sc : scripts) {
    for (bool inPlace : {false, true}) {
      for (int mode = 0; mode < 4; ++mode) {
        const bool streamed = mode & 1, streamWindow = mode & 2;
        SCOPED_TRACE(std::string(sc.name) + (inPlace ? ", in place" : ", out of place") +
                     (streamed ? ", streamed" : "") + (streamWindow ? ", window streamed" : ""));
        // Order-sensitive values: a sum taken in another order, or twice, shows in the low bits.
        std::vector<float> own(kCount), incoming(kCount), expect(kCount);
        for (size_t i = 0; i < kCount; ++i) {
          own[i] = 0.1f * (float)i + 1e-3f;
          incoming[i] = 1.0f / (float)(i + 3);
          expect[i] = own[i] + incoming[i];
        }
        OpTag tag;
        tag.seq = 7;
        tag.count = kCount;
        tag.bytes = kBytes;
        std::vector<unsigned char> in;
        Append(&in, &tag, sizeof tag);
        Append(&in, incoming.data(), kBytes);
        ScriptedConnection peer(in, sc.piece, sc.sendPiece, sc.windows, streamed, streamWindow);

        std::vector<float> send = own, recv(kCount, -1.0f);
        const BufRef local = inPlace ? BufRef{kRecvBuf, 0} : BufRef{kSendBuf, 0};
        if (inPlace) recv = own;
        std::vector<unsigned char> earlier(sc.earlierSend);
        for (size_t i = 0; i < earlier.size(); ++i) earlier[i] = (unsigned char)(i * 7 + 1);
        std::vector<Op> ops;
        if (sc.earlierSend) ops.push_back(MakeSend(1, {kScratchBuf, 0}, sc.earlierSend / sizeof(float)));
        Op reduce = MakeRecvReduce(1, {kRecvBuf, 0}, local, kCount);
        reduce.finalDst = true;
        Op forward = MakeSend(1, {kRecvBuf, 0}, kCount);
        forward.after = (int)ops.size();
        ops.push_back(reduce);
        ops.push_back(forward);
        Schedule s;
        s.steps.push_back({ops});
        PrepareSchedule(&s, sizeof(float));
        ASSERT_EQ(s.steps[0].ops[forward.after].forwardTo, forward.after + 1);

        Waiter waiter(nullptr, false, 0, 0);
        ExecEnv env;
        env.rank = 0;
        env.nranks = 2;
        env.conns = {nullptr, &peer};
        env.waiter = &waiter;
        env.tag.seq = 7;
        env.tag.count = kCount;
        env.describePeer = [](int r) { return "rank " + std::to_string(r); };
        const std::vector<void*> bufs = {send.data(), recv.data(), earlier.data()};
        const uint64_t before = ForwardedBytes();
        const Status st = Execute(s, bufs, KernelsFor(tcclFloat, tcclSum), env, [] { return std::string("test"); });
        ASSERT_TRUE(st.ok()) << st.message();

        EXPECT_EQ(0, memcmp(recv.data(), expect.data(), kBytes));
        std::vector<unsigned char> want;
        if (sc.earlierSend) {
          OpTag first = env.tag;
          first.bytes = sc.earlierSend;
          Append(&want, &first, sizeof first);
          Append(&want, earlier.data(), earlier.size());
        }
        Append(&want, &tag, sizeof tag);
        Append(&want, expect.data(), kBytes);
        const std::vector<unsigned char> sent = peer.Sent();
        ASSERT_EQ(sent.size(), want.size());
        EXPECT_TRUE(sent == want) << "the bytes sent differ from the tag and the reduced data";
        EXPECT_EQ(ForwardedBytes() - before, sc.forwarded);
        EXPECT_FALSE(peer.Overran()) << "a window was written past what it offered";
      }
    }
  }
}

}  // namespace
}  // namespace tccl
