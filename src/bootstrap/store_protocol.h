// Wire format between a bootstrap store client and its server.
//
//   client -> server, once:  Hello { magic, secret[16] }      server answers one byte 1 (accepted)
//   client -> server:        Request { type, keyLen, valLen } key value
//   server -> client (Get):  u32 valLen, value — sent as soon as the key exists
//
// Limits protect the server from malformed or hostile peers: longer keys or values close the
// connection.
//
// Abandonment: a key's namespace is the text before its first '/'. A Set of `<ns>/failed` (a rank
// that will not come, and why) answers every Get of a key in that namespace, pending or later, whose
// key does not exist, with that value: ranks waiting on a rank that failed learn it at once instead
// of at their deadline (Bootstrap::Abandon).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tccl {

struct StoreHello {
  static constexpr uint32_t kMagic = 0x54435354;  // "TCST"
  uint32_t magic;
  int32_t pid;  // lets the server tell its own process's clients from other ranks'
  uint8_t secret[16];
};

enum class StoreOp : uint32_t { Set = 1, Get = 2 };

struct StoreRequest {
  uint32_t op;
  uint32_t keyLen;
  uint32_t valLen;
};

constexpr uint32_t kStoreMaxKey = 1024;
// The key under a namespace that abandons it, and the prefix of its value (no record starts so).
constexpr char kStoreFailedKey[] = "failed";
constexpr char kStoreFailedPrefix[] = "\x01tccl: a rank will not come\x01";
constexpr uint32_t kStoreMaxValue = 16u << 20;

// The server's parsers, pure functions of the bytes received so far (fuzzed by
// tests/fuzz/fuzz_store_protocol.cc).
enum class HelloResult { Incomplete, Valid, Invalid };
// Checks the hello at the front of `in`; on Valid, *pid is the client's pid.
HelloResult ParseStoreHello(const std::string& in, const uint8_t secret[16], int32_t* pid);

struct StoreCommand {
  StoreOp op;
  std::string key, value;
};
// Parses whole requests from `in` starting at `pos`, appending them to `out` and advancing `pos`
// past them; a partial request at the end is left for later. False for a malformed request.
bool ParseStoreRequests(const std::string& in, size_t* pos, std::vector<StoreCommand>* out);

}  // namespace tccl
