// Fuzz target: the text a user controls — config file lines and the values they set, the TCCL_ALGO
// grammar, a unique id received from another process, and launcher environment variables.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/algo_filter.h"
#include "bootstrap/launcher_env.h"
#include "bootstrap/unique_id.h"
#include "config/params.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, std::string>> kv;
  tccl::ParseConfText(text, &kv);
  // The values the file's lines set, checked as communicator creation checks them.
  for (const auto& [name, value] : kv) {
    const std::string var = "TCCL_" + name;
    setenv(var.c_str(), value.c_str(), 1);
    tccl::ReloadParams();
    tccl::CheckParamValues();
    unsetenv(var.c_str());
  }
  if (!kv.empty()) tccl::ReloadParams();
  tccl::AlgoFilter filter;
  tccl::ParseAlgoFilter(text, &filter);
  tcclUniqueId id;
  memset(&id, 0, sizeof(id));
  memcpy(&id, data, size < sizeof(id) ? size : sizeof(id));
  tccl::UniqueIdData d;
  tccl::UnpackUniqueId(id, &d);
  // Launcher variables: the text's lines, in order, as RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT.
  static const char* names[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"};
  size_t start = 0;
  for (const char* name : names) {
    size_t end = text.find('\n', start);
    std::string v = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (v.find('\0') != std::string::npos) v.resize(v.find('\0'));
    setenv(name, v.c_str(), 1);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  tccl::LaunchInfo li;
  tccl::ReadLauncherEnv(&li);
  for (const char* name : names) unsetenv(name);
  return 0;
}
