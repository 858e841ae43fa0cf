// Algebraic identities and strength reduction.
#pragma once

namespace loom::ir {
class Kernel;
}

namespace loom::passes {

// Rewrites x+0, x-0, x*1, x/1, x*0 and x-x (integers only), x&x, x|0, x^x, shifts by 0,
// min/max(x,x), x==x (integers), not(not x), -(-x), casts to the same type and exact casts of
// casts, select(c,a,a), select(true,a,b), if on a constant condition, and integer mul/div/mod
// by powers of two into shifts and masks. Float rules keep IEEE results (x+0.0 only under
// Kernel::fast_math, never x*0.0). Commutative operations get their constant on the right.
bool algebraic_simplify(ir::Kernel& kernel);

}  // namespace loom::passes
