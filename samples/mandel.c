/* Mandelbrot: escape-time iteration for 4092 points (a 66 x 62 grid over
 * [-2, 1] x [-1.2, 1.2], OmpSCR-style), at most 16 iterations per point (Table 3 fixes the point count, not the iteration cap).
 * Checksum: total iterations and the number of points inside the set. */
#include <stdio.h>

#define W 66
#define H 62
#define MAXIT 16

int main(void) {
    long total = 0;
    int inside = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double c_re = -2.0 + 3.0 * x / (W - 1);
            double c_im = -1.2 + 2.4 * y / (H - 1);
            double zr = 0.0, zi = 0.0;
            int it = 0;
            while (it < MAXIT && zr * zr + zi * zi <= 4.0) {
                double t = zr * zr - zi * zi + c_re;
                zi = 2.0 * zr * zi + c_im;
                zr = t;
                it++;
            }
            total += it;
            if (it == MAXIT) inside++;
        }
    printf("checksum: %ld %d\n", total, inside);
    return 0;
}
