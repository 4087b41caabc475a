// Runs a fuzz target over every file of its seed corpus, without libFuzzer: the regular (g++)
// build replays the corpus in ctest so every parser stays crash-free on the seeds; the clang build
// (TCCL_BUILD_FUZZERS) links the same targets with libFuzzer to search for new inputs.
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  int files = 0;
  for (int i = 1; i < argc; ++i) {
    DIR* d = opendir(argv[i]);
    if (!d) {
      fprintf(stderr, "cannot open corpus directory %s\n", argv[i]);
      return 1;
    }
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream f(std::string(argv[i]) + "/" + e->d_name, std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++files;
    }
    closedir(d);
  }
  printf("replayed %d corpus files\n", files);
  return files > 0 ? 0 : 1;
}
