// Huge pages for large buffers read or written throughout: a module's image, a side file's
// CFI. In 4 KiB pages a buffer of tens of MB costs a page fault for each page first written
// and a TLB miss for most reads, both dearer in a virtual machine: finding that a
// 1 M-function module needs no side file read its 60 MB of tables in 0.12 s from small pages,
// 0.05 s from huge ones.
#pragma once

#include <cstddef>

namespace unwindkit {

// Asks that the whole 2 MiB pages inside [data, data + size) be transparent huge pages, which
// Linux's "madvise" mode (Debian's default) gives only where asked. A hint: where it is
// refused, or the range holds no whole huge page, nothing changes.
void advise_huge_pages(const void* data, size_t size);

}  // namespace unwindkit
