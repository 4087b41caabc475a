// Host identity: which ranks can share memory. Two ranks share a host when they see the same
// kernel boot (boot_id) and the same /dev/shm (mount namespace), not merely the same hostname —
// containers often share hostnames, and different machines sometimes do.
// TCCL_HOST_ID overrides it (tests use it to make ranks on one machine act as separate hosts).
#pragma once

#include <string>

namespace tccl {

std::string HostId();
std::string HostName();

// Test hook: ranks running as threads of one process can pose as different hosts. Applies to the
// calling thread only; empty clears it.
void SetThreadHostIdForTest(const std::string& id);

}  // namespace tccl
