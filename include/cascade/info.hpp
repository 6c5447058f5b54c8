//! @file `cascade info`.
#pragma once

namespace cascade {
int run_info();
}
