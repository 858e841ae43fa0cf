// gtest checks of loom.h results, for the C ABI tests: a call that must succeed, and one that
// must fail with a given result and a message naming each given part.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include <loom/loom.h>

#define ASSERT_LOOM(call) \
  ASSERT_EQ((call), LOOM_SUCCESS) << #call << ": " << loom_last_error_message()
#define EXPECT_LOOM(call) \
  EXPECT_EQ((call), LOOM_SUCCESS) << #call << ": " << loom_last_error_message()
// `call` fails with `code` (loom_last_error() says so too), and the message holds each of the
// parts.
#define EXPECT_LOOM_ERROR(call, code, ...)                                             \
  do {                                                                                 \
    LoomResult r_ = (call);                                                            \
    EXPECT_EQ(r_, code) << #call << ": " << loom_result_name(r_) << ": "               \
                        << loom_last_error_message();                                  \
    EXPECT_EQ(loom_last_error(), code) << #call;                                       \
    for (const std::string& part_ : std::initializer_list<std::string>{__VA_ARGS__})   \
      EXPECT_NE(std::string(loom_last_error_message()).find(part_), std::string::npos) \
          << #call << ": no '" << part_ << "' in: " << loom_last_error_message();      \
  } while (0)
