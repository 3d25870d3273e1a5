/* GDB's JIT-reader unwinder interface, measured (scripts/bench gdb-jit): the route issue I
   listed for GDB besides side files, and not taken. Not part of the product: an upper bound
   on what the route could gain, so its rules come precomputed and it checks nothing.

   At load it reads UNWINDKIT_BENCH_JIT_ROWS, one CFI row per line at run-time addresses:
     START END CFA_REG CFA_OFFSET [REG:RULE]...     RULE: u (undefined), s (same), c-N (at CFA-N)
   sorted by START: the rows of the plugin's side file for the program, as `readelf -wF`
   prints them (bench/gdb_jit_route.py), so the reader applies the product's own rules. A
   frame a row covers gets rsp = CFA, rip from its slot and each listed register by its rule;
   any other frame is declined, and GDB's own unwinders (the side file) do it. A register no
   rule lists is not handed back: GDB shows it <not saved>, where its DWARF unwinder assumes
   "same value" for a register a CFI leaves unspecified. A row is looked up at the frame's pc
   itself: the product would look a return address up at pc - 1 (the core's CodeAddress) and
   decline where the two rows differ, a little more work per frame than here.

   -DPASS_EVERY_REGISTER also hands back, unchanged, every register no rule lists that GDB 13
   gives a DWARF number on x86-64 (the general registers, xmm0-15, st0-7, rflags, the segment
   registers): as close to "same value" as a JIT frame can come. */
#include <gdb/jit-reader.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GDB_DECLARE_GPL_COMPATIBLE_READER

enum { kRip = 16, kRsp = 7 };

enum { kMaxRules = 17 };

struct rule {
  int reg;
  char kind;  /* 'u', 's' or 'c' */
  long offset;
};

struct row {
  GDB_CORE_ADDR start, end;
  int cfa_reg;
  long cfa_offset;
  int rule_count;
  struct rule rules[kMaxRules];
};

static struct row *rows;
static size_t row_count;

static const struct row *row_for(GDB_CORE_ADDR pc) {
  size_t lo = 0, hi = row_count;
  while (lo < hi) {  /* the last row starting at or before pc */
    size_t mid = lo + (hi - lo) / 2;
    if (rows[mid].start <= pc) lo = mid + 1; else hi = mid;
  }
  return lo > 0 && pc < rows[lo - 1].end ? &rows[lo - 1] : NULL;
}

static int get(struct gdb_unwind_callbacks *cb, int reg, GDB_CORE_ADDR *out) {
  struct gdb_reg_value *v = cb->reg_get(cb, reg);
  int ok = v->defined && v->size == 8;
  if (ok) memcpy(out, v->value, 8);
  v->free(v);
  return ok;
}

static void free_value(struct gdb_reg_value *v) { free(v); }

static void set(struct gdb_unwind_callbacks *cb, int reg, GDB_CORE_ADDR x) {
  struct gdb_reg_value *v = malloc(sizeof *v + 8);
  v->size = 8;
  v->defined = 1;
  v->free = free_value;
  memcpy(v->value, &x, 8);
  cb->reg_set(cb, reg, v);
}

static void pass_through(struct gdb_unwind_callbacks *cb, int reg) {
  struct gdb_reg_value *v = cb->reg_get(cb, reg);
  if (v->defined) cb->reg_set(cb, reg, v); else v->free(v);
}

/* The frame's row and CFA, or 0 to decline. */
static const struct row *frame(struct gdb_unwind_callbacks *cb, GDB_CORE_ADDR *cfa) {
  GDB_CORE_ADDR pc, base;
  const struct row *r = get(cb, kRip, &pc) ? row_for(pc) : NULL;
  if (r == NULL || !get(cb, r->cfa_reg, &base)) return NULL;
  *cfa = base + r->cfa_offset;
  return r;
}

static enum gdb_status unwind(struct gdb_reader_funcs *self, struct gdb_unwind_callbacks *cb) {
  (void)self;
  GDB_CORE_ADDR cfa;
  const struct row *r = frame(cb, &cfa);
  if (r == NULL) return GDB_FAIL;
  GDB_CORE_ADDR saved[kMaxRules];
  for (int i = 0; i < r->rule_count; i++)  /* every slot is read before anything is set */
    if (r->rules[i].kind == 'c' &&
        cb->target_read(cfa + r->rules[i].offset, &saved[i], 8) != GDB_SUCCESS)
      return GDB_FAIL;
  set(cb, kRsp, cfa);
  for (int i = 0; i < r->rule_count; i++) {
    if (r->rules[i].kind == 'c') set(cb, r->rules[i].reg, saved[i]);
    if (r->rules[i].kind == 's') pass_through(cb, r->rules[i].reg);
  }
#ifdef PASS_EVERY_REGISTER
  /* 41-48 (mm0-7) are pseudo-registers without a DWARF mapping in GDB 13: asking for one
     fails an assertion inside GDB. */
  static const int more[] = {0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15,
                             17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
                             33, 34, 35, 36, 37, 38, 39, 40, 49, 50, 51, 52, 53, 54, 55};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    int listed = 0;
    for (int j = 0; j < r->rule_count; j++) listed |= r->rules[j].reg == more[i];
    if (!listed) pass_through(cb, more[i]);
  }
#endif
  return GDB_SUCCESS;
}

static struct gdb_frame_id frame_id(struct gdb_reader_funcs *self,
                                    struct gdb_unwind_callbacks *cb) {
  (void)self;
  struct gdb_frame_id id = {0, 0};
  GDB_CORE_ADDR cfa;
  const struct row *r = frame(cb, &cfa);
  if (r != NULL) {
    id.code_address = r->start;  /* a row's start, not the function's: unique all the same */
    id.stack_address = cfa;
  }
  return id;
}

static enum gdb_status read_debug_info(struct gdb_reader_funcs *self,
                                       struct gdb_symbol_callbacks *cb, void *memory,
                                       long memory_sz) {
  (void)self, (void)cb, (void)memory, (void)memory_sz;
  return GDB_FAIL;
}

static void destroy(struct gdb_reader_funcs *self) { (void)self; }

static struct gdb_reader_funcs funcs = {GDB_READER_INTERFACE_VERSION, NULL, read_debug_info,
                                        unwind, frame_id, destroy};

struct gdb_reader_funcs *gdb_init_reader(void) {
  const char *path = getenv("UNWINDKIT_BENCH_JIT_ROWS");
  FILE *f = path ? fopen(path, "r") : NULL;
  if (f == NULL) return NULL;
  size_t capacity = 0;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    struct row r = {0};
    int used;
    if (sscanf(line, "%lx %lx %d %ld%n", &r.start, &r.end, &r.cfa_reg, &r.cfa_offset, &used) != 4)
      continue;
    for (char *p = line + used, *token; (token = strtok(p, " \n")) && r.rule_count < kMaxRules;
         p = NULL) {
      struct rule *rule = &r.rules[r.rule_count++];
      char kind[8] = {0};
      sscanf(token, "%d:%7s", &rule->reg, kind);
      rule->kind = kind[0];
      rule->offset = kind[0] == 'c' ? strtol(kind + 1, NULL, 10) : 0;
    }
    if (row_count == capacity) {
      capacity = capacity ? 2 * capacity : 1024;
      rows = realloc(rows, capacity * sizeof *rows);
    }
    rows[row_count++] = r;
  }
  fclose(f);
  return &funcs;
}
