/* arm64 chain, FRAME half: functions with a frame record and saved X and D pairs. Each
   calls chain_keep after its assembly call so the compiler builds a real frame. */
#include "chain_arm64.h"

u64 chain_dwarf(u64 *ctx);
u64 chain_frame_d(u64 *ctx);
u64 chain_leaf(u64 *ctx);

__attribute__((noinline)) void chain_keep(volatile u64 *p) { p[0] += 1; }

/* 1: FRAME with every X pair and every D pair. */
__attribute__((noinline)) u64 chain_entry(u64 *ctx) {
  volatile u64 local[4] = {1, 2, 3, 4};
  RECORD_RA(ctx, 1);
  A64_CALL(ctx, 1, chain_frame_d,
           SETX(19, 0x0113) SETX(20, 0x0114) SETX(21, 0x0115) SETX(22, 0x0116)
           SETX(23, 0x0117) SETX(24, 0x0118) SETX(25, 0x0119) SETX(26, 0x011a)
           SETX(27, 0x011b) SETX(28, 0x011c)
           SETD(8, 0x0108) SETD(9, 0x0109) SETD(10, 0x010a) SETD(11, 0x010b)
           SETD(12, 0x010c) SETD(13, 0x010d) SETD(14, 0x010e) SETD(15, 0x010f),
           "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
           "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15");
  chain_keep(local);
  return local[1];
}

/* 2: FRAME with D pairs only (d10/d11, d14/d15): their slots follow fp/lr directly. */
__attribute__((noinline)) u64 chain_frame_d(u64 *ctx) {
  volatile u64 local[2] = {5, 6};
  RECORD_RA(ctx, 2);
  A64_CALL(ctx, 2, chain_dwarf,
           SETD(10, 0x020a) SETD(11, 0x020b) SETD(14, 0x020e) SETD(15, 0x020f),
           "d10", "d11", "d14", "d15");
  chain_keep(local);
  return local[0];
}

/* 4: FRAME with two X pairs and one D pair, none of them the first of its kind. */
__attribute__((noinline)) u64 chain_frame_x(u64 *ctx) {
  volatile u64 local[3] = {7, 8, 9};
  RECORD_RA(ctx, 4);
  A64_CALL(ctx, 4, chain_leaf,
           SETX(21, 0x0415) SETX(22, 0x0416) SETX(27, 0x041b) SETX(28, 0x041c)
           SETD(12, 0x040c) SETD(13, 0x040d),
           "x21", "x22", "x27", "x28", "d12", "d13");
  chain_keep(local);
  return local[2];
}
