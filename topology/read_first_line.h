// The first line of a small text file (/proc, /sys, /etc), without its newline; "" when it cannot
// be read.
#pragma once

#include <string>

namespace tccl {

std::string ReadFirstLine(const std::string& path);

}  // namespace tccl
