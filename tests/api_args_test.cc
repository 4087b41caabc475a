#include <gtest/gtest.h>
TEST(Placeholder, Args) {}
