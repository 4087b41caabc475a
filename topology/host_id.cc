#include "topology/host_id.h"

#include <sys/stat.h>
#include <unistd.h>


#include "config/params.h"
#include "topology/read_first_line.h"

namespace tccl {

std::string HostName() {
  char h[256] = {0};
  gethostname(h, sizeof(h) - 1);
  return h;
}

static thread_local std::string t_testHostId;

void SetThreadHostIdForTest(const std::string& id) { t_testHostId = id; }

std::string HostId() {
  if (!t_testHostId.empty()) return t_testHostId;
  std::string override = ParamString("HOST_ID");
  if (!override.empty()) return override;
  std::string id = ReadFirstLine("/proc/sys/kernel/random/boot_id");
  if (id.empty()) id = ReadFirstLine("/etc/machine-id");
  struct stat st;
  if (stat("/proc/self/ns/mnt", &st) == 0) id += ":mnt" + std::to_string((unsigned long)st.st_ino);
  if (id.empty()) id = HostName();
  return id;
}

}  // namespace tccl
