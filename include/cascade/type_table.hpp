//! @file Choices that are types: the alternative of a std::variant whose word list kTypes holds
//! the deck's word, made by its `from` (forcings, initial conditions). The words live with their
//! types; nothing else compares them.
#pragma once

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include "cascade/error.hpp"

namespace cascade {

//! The alternative of Variant that claims `word`, made by its static from(args...); InputError
//! "KEY: unknown type 'WORD'" where none does.
template <class Variant, std::size_t I = 0, class... Args>
Variant make_by_type(const std::string& word, const char* key, const Args&... args) {
  if constexpr (I == std::variant_size_v<Variant>) {
    throw InputError(std::string(key) + ": unknown type '" + word + "'");
  } else {
    using T = std::variant_alternative_t<I, Variant>;
    for (const char* w : T::kTypes)
      if (word == w) return Variant(std::in_place_index<I>, T::from(args...));
    return make_by_type<Variant, I + 1>(word, key, args...);
  }
}

//! Every word the alternatives of Variant claim, in order (tests hold them against the deck's table).
template <class Variant, std::size_t I = 0>
void type_words(std::vector<std::string>& out) {
  if constexpr (I < std::variant_size_v<Variant>) {
    for (const char* w : std::variant_alternative_t<I, Variant>::kTypes) out.emplace_back(w);
    type_words<Variant, I + 1>(out);
  }
}

}  // namespace cascade
