#include <gtest/gtest.h>
TEST(Placeholder, Config) {}
