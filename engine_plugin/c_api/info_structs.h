// The structs loom.h calls read and write begin with `struct_size`, set by the caller: a
// program built against an older loom.h of the same major version passes a smaller struct,
// one built against a newer loom.h a larger one. These are the only two places that copy
// them: every field within the caller's size, nothing beyond it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "engine_plugin/c_api/c_api_error.h"

namespace loom::capi {

// The caller's struct as this library's version of it: the fields within struct_size, the
// rest 0 (a later header's larger struct is read up to what this library knows; an older
// header's, down to `first_size`, the size of the struct's first version).
template <typename T>
T read_info(const T* info, const std::string& what, size_t first_size = sizeof(T)) {
  if (!info) throw ApiError(LOOM_ERROR_NULL_HANDLE, what + " is null");
  if (info->struct_size < first_size)
    throw ApiError(LOOM_ERROR_INVALID_ARGUMENT,
                   what + ": struct_size is " + std::to_string(info->struct_size) +
                       "; set it to sizeof the struct (" + std::to_string(sizeof(T)) + ")");
  T out{};
  std::memcpy(&out, info, std::min<size_t>(info->struct_size, sizeof(T)));
  return out;
}

// Checks the caller's `out` (its struct_size set, as for read_info) before a call fills it.
template <typename T>
void check_out(const T* out, const std::string& what, size_t first_size = sizeof(T)) {
  read_info(out, what, first_size);
}

// Writes `value` into the caller's struct: the fields within its struct_size, which stays.
template <typename T>
void write_out(T* out, T value) {
  value.struct_size = out->struct_size;
  std::memcpy(static_cast<void*>(out), &value, std::min<size_t>(out->struct_size, sizeof(T)));
}

// Element `index` of the caller's array of structs, whose stride is the first element's
// struct_size (checked with check_out first).
template <typename T>
T* element(T* first, size_t index) {
  return reinterpret_cast<T*>(reinterpret_cast<char*>(first) + index * first->struct_size);
}

}  // namespace loom::capi
