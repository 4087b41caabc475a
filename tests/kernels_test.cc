#include <gtest/gtest.h>
TEST(Placeholder, Kernels) {}
