// Small text helpers for messages: the nearest known name to a misspelt one, lists.
#pragma once
#include <string>
#include <vector>

namespace fabricsim {

// The candidate closest to word by Levenshtein distance if that distance is at most
// max(2, word.size() / 3), else "". Ties go to the earlier candidate.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

// "a, b, c".
std::string join_list(const std::vector<std::string>& items);

// The hint for an unknown name: "did you mean 'x'? known: a, b" (without the question
// when nothing is near; "none are defined" when there are no candidates).
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known);

}  // namespace fabricsim
