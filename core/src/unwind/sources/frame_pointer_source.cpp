// The frame-pointer chain, for frames no table covers: (cfa, ra, fp) = (fp + 2w, [fp + w], [fp]).
// A zero or unknown FP gives nothing: by the psABI convention the deepest frame (_start, a
// thread's start) has FP 0, so that is where the chain ends.
#include "sources.h"
#include "unwindkit/unwind/walker.h"

namespace unwindkit::unwind::sources {
namespace {

class FramePointer final : public RuleSource {
 public:
  Source kind() const override { return Source::FramePointer; }
  Result<std::optional<UnwindRule>> rule(const RuleQuery& q) const override {
    if (q.regs.fp().value_or(0) == 0) return std::optional<UnwindRule>();
    auto r = frame_pointer_rule(q.regs.arch());
    if (!r) return tl::unexpected(r.error());
    return std::optional<UnwindRule>(std::move(*r));
  }
};

}  // namespace

std::shared_ptr<const RuleSource> frame_pointer() { return std::make_shared<FramePointer>(); }

}  // namespace unwindkit::unwind::sources
