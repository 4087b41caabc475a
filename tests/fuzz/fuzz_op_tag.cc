// Fuzz target: describing and comparing operation tags received from peers.
#include <cstdint>
#include <cstring>

#include "exec/op_tag.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tccl::OpTag got, want;
  memcpy(&got, data, size < sizeof(got) ? size : sizeof(got));
  if (size > sizeof(got)) memcpy(&want, data + sizeof(got), size - sizeof(got) < sizeof(want) ? size - sizeof(got) : sizeof(want));
  std::string d = tccl::DescribeTag(got);
  std::string c = tccl::CompareTags(got, want);
  if (memcmp(&got, &want, sizeof(got)) == 0 && !c.empty()) __builtin_trap();  // equal tags never differ
  return (int)(d.size() & 0);
}
