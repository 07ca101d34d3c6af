/* Block motion matching of one grayscale frame against a reference frame.
 *
 * For every block of `cur` it finds the displacement (dy, dx) into `ref` with the lowest
 * cost  sad / (block * block * 255) + penalty * (|dy| + |dx|) / radius,  searching with a
 * large hexagon from (0, 0) until the centre wins, then refining over its eight neighbours.
 * kernels/block_match.py holds the NumPy reference; both must give the same answer bit for
 * bit (tests/kernels/test_gate.py), so the cost is computed by the same expression, in
 * double, with the same strict "<" tie-breaking in the same candidate order.
 */
#include <stdint.h>
#include <stdlib.h>

static const int LARGE[6][2] = {{-2, 0}, {-1, 2}, {1, 2}, {2, 0}, {1, -2}, {-1, -2}};
static const int SMALL[8][2] = {{-1, 0}, {0, -1}, {0, 1}, {1, 0}, {-1, -1}, {-1, 1}, {1, -1}, {1, 1}};

/* The default block size: one 16-byte row at a time with the CPU's absolute-difference instructions. */
#if defined(__SSE2__)
#include <emmintrin.h>
static int32_t sad16(const uint8_t *a, const uint8_t *b, int stride) {
    __m128i acc = _mm_setzero_si128();
    for (int y = 0; y < 16; y++) {
        __m128i ra = _mm_loadu_si128((const __m128i *)(a + (size_t)y * stride));
        __m128i rb = _mm_loadu_si128((const __m128i *)(b + (size_t)y * stride));
        acc = _mm_add_epi64(acc, _mm_sad_epu8(ra, rb));
    }
    return (int32_t)(_mm_cvtsi128_si32(acc) + _mm_cvtsi128_si32(_mm_srli_si128(acc, 8)));
}
#elif defined(__ARM_NEON)
#include <arm_neon.h>
static int32_t sad16(const uint8_t *a, const uint8_t *b, int stride) {
    uint16x8_t acc = vdupq_n_u16(0);  /* 16 rows x 2 x 255 fits in 16 bits */
    for (int y = 0; y < 16; y++)
        acc = vpadalq_u8(acc, vabdq_u8(vld1q_u8(a + (size_t)y * stride), vld1q_u8(b + (size_t)y * stride)));
    uint32x4_t s4 = vpaddlq_u16(acc);
    uint64x2_t s2 = vpaddlq_u32(s4);
    return (int32_t)(vgetq_lane_u64(s2, 0) + vgetq_lane_u64(s2, 1));
}
#else
static int32_t sad16(const uint8_t *a, const uint8_t *b, int stride) {
    int32_t s = 0;
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++) s += abs((int)a[(size_t)y * stride + x] - (int)b[(size_t)y * stride + x]);
    return s;
}
#endif

static int32_t sad(const uint8_t *a, const uint8_t *b, int stride, int block) {
    if (block == 16) return sad16(a, b, stride);
    int32_t s = 0;
    for (int y = 0; y < block; y++) {
        const uint8_t *ra = a + (size_t)y * stride, *rb = b + (size_t)y * stride;
        for (int x = 0; x < block; x++) s += abs((int)ra[x] - (int)rb[x]);
    }
    return s;
}

typedef struct {
    const uint8_t *ref, *blk;
    int h, w, stride, block, radius, y0, x0;
    double penalty, scale;
} ctx_t;

/* Cost of displacement (dy, dx); returns 0 when it leaves the frame or the search window. */
static int cost(const ctx_t *c, int dy, int dx, double *out, int32_t *sad_out) {
    int y = c->y0 + dy, x = c->x0 + dx;
    if (abs(dy) > c->radius || abs(dx) > c->radius) return 0;
    if (y < 0 || x < 0 || y + c->block > c->h || x + c->block > c->w) return 0;
    int32_t s = sad(c->blk, c->ref + (size_t)y * c->stride + x, c->stride, c->block);
    *out = (double)s / c->scale + c->penalty * (double)(abs(dy) + abs(dx)) / (double)c->radius;
    *sad_out = s;
    return 1;
}

void block_match(const uint8_t *ref, const uint8_t *cur, int h, int w, int block, int radius,
                 double penalty, int32_t *sad_out, int32_t *dy_out, int32_t *dx_out) {
    int rows = h / block, cols = w / block;
    ctx_t c = {ref, 0, h, w, w, block, radius, 0, 0, penalty, (double)block * block * 255.0};
    for (int by = 0; by < rows; by++) {
        for (int bx = 0; bx < cols; bx++) {
            c.y0 = by * block;
            c.x0 = bx * block;
            c.blk = cur + (size_t)c.y0 * w + c.x0;
            int best_y = 0, best_x = 0;
            double best;
            int32_t best_sad, s;
            double v;
            cost(&c, 0, 0, &best, &best_sad);
            if (best_sad != 0) {
                for (int step = 0; step < radius; step++) {
                    int cy = best_y, cx = best_x, moved = 0;
                    for (int k = 0; k < 6; k++) {
                        if (cost(&c, cy + LARGE[k][0], cx + LARGE[k][1], &v, &s) && v < best) {
                            best = v; best_sad = s; best_y = cy + LARGE[k][0]; best_x = cx + LARGE[k][1]; moved = 1;
                        }
                    }
                    if (!moved) break;
                }
                int cy = best_y, cx = best_x;
                for (int k = 0; k < 8; k++) {
                    if (cost(&c, cy + SMALL[k][0], cx + SMALL[k][1], &v, &s) && v < best) {
                        best = v; best_sad = s; best_y = cy + SMALL[k][0]; best_x = cx + SMALL[k][1];
                    }
                }
            }
            int i = by * cols + bx;
            sad_out[i] = best_sad;
            dy_out[i] = best_y;
            dx_out[i] = best_x;
        }
    }
}
