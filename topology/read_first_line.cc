#include "topology/read_first_line.h"

#include <fstream>

namespace tccl {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace tccl
