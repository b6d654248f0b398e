/* Stencil: 2-D Jacobi 5-point relaxation on a 48x48 grid of doubles with a fixed
 * boundary (hot top edge), three sweeps alternating between two buffers. Prints the
 * sum of the interior and the centre value as the checksum. Deterministic. */
#include <stdio.h>

#define N 48
#define SWEEPS 3

static double a[N][N];
static double b[N][N];

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (i == 0) ? 100.0 : (double)((i * 7 + j * 3) % 11) * 0.5;
            b[i][j] = a[i][j];
        }
}

static void sweep(double (*src)[N], double (*dst)[N]) {
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
            dst[i][j] = 0.25 * (src[i - 1][j] + src[i + 1][j] + src[i][j - 1] + src[i][j + 1]);
}

int main(void) {
    init();
    for (int s = 0; s < SWEEPS; s++) {
        if (s % 2 == 0)
            sweep(a, b);
        else
            sweep(b, a);
    }
    double (*g)[N] = (SWEEPS % 2 == 0) ? a : b;
    double sum = 0.0;
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
            sum += g[i][j];
    printf("checksum: %.6f %.6f\n", sum, g[N / 2][N / 2]);
    return 0;
}
