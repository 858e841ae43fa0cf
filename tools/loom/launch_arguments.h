// `loom launch DOC KERNEL --arg NAME=VALUE ...`: command-line text made into the arguments of
// one launch, read by each parameter's declared type. Every mistake is a loom::Error naming
// the document, the kernel and the argument, and listing what there is to choose from.
#pragma once

#include <string>
#include <vector>

#include "engine_plugin/include/loom/program.h"

namespace loom::cli {

// One value of type `type` from text: a number or `true`/`false` for a scalar; for a vector or
// matrix, its components separated by commas (`1,2,3`, a matrix column-major) or as a list
// (`[1, 2, 3]`, a matrix as a list of columns `[[1, 2], [3, 4]]`), or one number for every
// component. Integers must be whole and in the type's range, an f32 within its range.
// Throws loom::Error with `what` ("argument 'x' (i32)") leading the message, at `where`.
Arg parse_value(const std::string& text, ValueType type, const Place& where,
                const std::string& what);

// The arguments of one launch of `kernel` from `specs` ("NAME=VALUE" each), by parameter:
// - value: parse_value by its type;
// - ndarray, texture, argpack: the program's resource of that name; by default the one named
//   like the parameter;
// - argpack members: "PARAM.MEMBER=VALUE" (a dotted path for nested members) sets the member
//   of the argpack the parameter is bound to, read by the member's type (set_argpack);
// - template: a field name, or a constant read by the template's type; a `field` template
//   defaults to the field named like the parameter.
// Errors: an unknown kernel (listing the kernels), an argument the kernel has no parameter
// for (listing the parameters), one given twice, a missing one, a value that does not parse
// for its type or is out of its range, an unknown resource (listing those of its kind).
Args launch_arguments(Program& program, const std::string& kernel,
                      const std::vector<std::string>& specs);

}  // namespace loom::cli
