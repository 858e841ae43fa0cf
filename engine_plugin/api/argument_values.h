// Checked conversion of loom::Arg values (launch arguments, argpack members, pipeline
// arguments) to the components of a value type, the same rules everywhere:
// - integers must fit the type (no wrapping: 3000000000 is not an i32, -1 not a u8);
// - an integer type takes whole numbers only (3.0 yes, 0.5 no), in lists too;
// - a bool takes true/false or the integers 0 and 1;
// - a float type takes any number (an f32 not one beyond its range);
// - a scalar splats over a vector or matrix;
// - a matrix takes a flat column-major list or a list of columns (one inner list per column);
//   a vector takes a flat list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine_plugin/include/loom/program.h"
#include "runtime/common/error.h"

namespace loom {

namespace graph {
struct Literal;
}

// The packed components of `a` as `type` (size_of(type.scalar) bytes each, bools one byte
// 0/1), or a loom::Error at `where`: "<what> of type i32 cannot hold 3000000000", where
// `what` names the place ("parameter 'base'", "member 'job.scale'").
std::vector<uint8_t> argument_bytes(const Arg& a, ValueType type, const Place& where,
                                    const std::string& what);

// A document literal (a pipeline argument, an argpack value) as an argument: a string names
// a resource, a list of lists is a matrix given by its columns.
Arg literal_to_arg(const graph::Literal& l, const Place& where);

// "the integer 3", "the number 2.5", "true", "a list of 3 numbers", "'name'".
std::string describe_arg(const Arg& a);

}  // namespace loom
