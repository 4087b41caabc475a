// Wire format between a bootstrap store client and its server.
//
//   client -> server, once:  Hello { magic, secret[16] }      server answers one byte 1 (accepted)
//   client -> server:        Request { type, keyLen, valLen } key value
//   server -> client (Get):  u32 valLen, value — sent as soon as the key exists
//
// Limits protect the server from malformed or hostile peers: longer keys or values close the
// connection.
#pragma once

#include <cstdint>

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
constexpr uint32_t kStoreMaxValue = 16u << 20;

}  // namespace tccl
