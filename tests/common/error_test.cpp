// InternalError: a broken invariant of Loom is its own type, told apart from a user's Error.
#include <gtest/gtest.h>

#include <string>

#include "runtime/common/error.h"

using namespace loom;

// A broken invariant is its own type: "internal error", where the check is, and the place
// being worked on; a user's error is a plain Error.
TEST(InternalError, SaysItIsInternalAndWhereTheCheckIs) {
  const int line = __LINE__ + 2;
  try {
    throw InternalError(Place{"doc.loom.json", "step"}, "a task without a body");
  } catch (const Error& e) {
    ASSERT_NE(dynamic_cast<const InternalError*>(&e), nullptr);
    const auto& internal = static_cast<const InternalError&>(e);
    std::string where = "tests/common/error_test.cpp:" + std::to_string(line);
    EXPECT_NE(internal.location().find(where), std::string::npos) << internal.location();
    EXPECT_NE(internal.location().find("TestBody"), std::string::npos) << internal.location();
    EXPECT_EQ(std::string(e.what()),
              "doc.loom.json: kernel 'step': internal error: a task without a body [in " +
                  internal.location() + "]");
    EXPECT_EQ(e.place().kernel, "step");
  }
  try {
    throw Error(Place{"doc.loom.json", "step", 3, "x"}, "expects a float");
  } catch (const Error& e) {
    EXPECT_EQ(dynamic_cast<const InternalError*>(&e), nullptr);
    EXPECT_EQ(std::string(e.what()),
              "doc.loom.json: kernel 'step': node 3: pin 'x': expects a float");
  }
}
