// visit_rule_rows (see rule_rows.h): decode()'s walk, each row's rule found by its key.
#include "unwindkit/sframe/rule_rows.h"

#include <vector>

#include "read.h"
#include "row_memo.h"

namespace unwindkit::sframe {

Result<void> visit_rule_rows(
    Bytes bytes, uint64_t section_address, Format format,
    const std::function<void(const FunctionRules&, std::span<const UnwindRule>)>& visit) {
  auto layout = detail::read_layout(bytes, format);
  if (!layout) return tl::unexpected(layout.error());
  const Header& h = layout->header;
  std::vector<UnwindRule> rules;
  detail::RowMemo<uint32_t> known;
  std::vector<RuleRow> rows;
  // The rule of row `j` of FDE `i`, added to the table when new; nullopt when it does not
  // interpret.
  auto rule_of = [&](size_t i, size_t j, const Fde& fde, const Fre& fre,
                     std::span<const int32_t> words) -> std::optional<uint32_t> {
    const auto key = detail::row_key(fde, fre, words);
    if (key)
      if (const uint32_t* found = known.find(*key)) return *found;
    auto row = detail::interpret_words(h, fde.flex(h.version), fde.fre_type(), fre, words, i, j);
    if (!row) return std::nullopt;
    UnwindRule rule = detail::lower_row(h, fde, fre.info, *row);
    rule.func_start = rule.func_end = 0;
    const auto index = static_cast<uint32_t>(rules.size());
    rules.push_back(std::move(rule));
    if (key) known.insert(*key, index);  // a row of more words than a key holds: a rule each
    return index;
  };
  return detail::for_each_function(
      *layout, section_address, format,
      [&](size_t i, const Fde& fde, const std::vector<Fre>& fres, const std::vector<int32_t>& words) {
        rows.clear();
        for (size_t j = 0; j < fres.size(); ++j) {
          const Fre& fre = fres[j];
          const auto rule = rule_of(i, j, fde, fre,
                                    std::span<const int32_t>(words).subspan(fre.first_word, fre.word_count()));
          if (rule) rows.push_back({fre.start_offset, *rule});
        }
        const FunctionRules function{fde.func_start, fde.size, fde.pcmask(),
                                     fde.pcmask() ? rep_size(h, fde) : 0, rows};
        visit(function, rules);
      });
}

}  // namespace unwindkit::sframe
