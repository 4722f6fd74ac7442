#include "models/core/text.h"

#include <algorithm>

namespace fabricsim {

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  std::vector<size_t> row;
  for (const std::string& c : candidates) {
    // Levenshtein distance with one rolling row: row[j] = distance(word[0..i), c[0..j)).
    row.resize(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        const size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (word[i - 1] == c[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    if (row[c.size()] < best_distance) {
      best_distance = row[c.size()];
      best = c;
    }
  }
  return best;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& known) {
  const std::string near = nearest(word, known);
  std::string hint = near.empty() ? "" : "did you mean '" + near + "'? ";
  return hint + (known.empty() ? "none are defined" : "known: " + join_list(known));
}

}  // namespace fabricsim
