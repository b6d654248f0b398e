/* Strassen: recursive Strassen multiplication of two N x N matrices
 * (N a power of two; default 8, the source's "Strassen8" = matrices of 64
 * elements; build with -D N=16 for "Strassen16" = 256 elements), down to
 * 1 x 1 blocks. Checksum: the sum of the product's entries and its trace. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 8
#endif

static unsigned long long seed = 8ULL;

static double rnd(void) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(seed >> 11) / 9007199254740992.0 - 0.5;
}

/* c = a (+/-) b for n x n blocks stored with row strides sa, sb, sc */
static void add(int n, const double *a, int sa, const double *b, int sb, double *c, int sc, int sign) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) c[i * sc + j] = a[i * sa + j] + sign * b[i * sb + j];
}

static void strassen(int n, const double *a, int sa, const double *b, int sb, double *c, int sc) {
    if (n == 1) { c[0] = a[0] * b[0]; return; }
    int h = n / 2;
    const double *a11 = a, *a12 = a + h, *a21 = a + h * sa, *a22 = a + h * sa + h;
    const double *b11 = b, *b12 = b + h, *b21 = b + h * sb, *b22 = b + h * sb + h;
    double *t = malloc(9 * (size_t)h * h * sizeof(double));
    double *m[7], *x = t + 7 * h * h, *y = t + 8 * h * h;
    for (int k = 0; k < 7; k++) m[k] = t + k * h * h;
    add(h, a11, sa, a22, sa, x, h, 1); add(h, b11, sb, b22, sb, y, h, 1); strassen(h, x, h, y, h, m[0], h);
    add(h, a21, sa, a22, sa, x, h, 1); strassen(h, x, h, b11, sb, m[1], h);
    add(h, b12, sb, b22, sb, y, h, -1); strassen(h, a11, sa, y, h, m[2], h);
    add(h, b21, sb, b11, sb, y, h, -1); strassen(h, a22, sa, y, h, m[3], h);
    add(h, a11, sa, a12, sa, x, h, 1); strassen(h, x, h, b22, sb, m[4], h);
    add(h, a21, sa, a11, sa, x, h, -1); add(h, b11, sb, b12, sb, y, h, 1); strassen(h, x, h, y, h, m[5], h);
    add(h, a12, sa, a22, sa, x, h, -1); add(h, b21, sb, b22, sb, y, h, 1); strassen(h, x, h, y, h, m[6], h);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < h; j++) {
            int k = i * h + j;
            c[i * sc + j] = m[0][k] + m[3][k] - m[4][k] + m[6][k];
            c[i * sc + j + h] = m[2][k] + m[4][k];
            c[(i + h) * sc + j] = m[1][k] + m[3][k];
            c[(i + h) * sc + j + h] = m[0][k] - m[1][k] + m[2][k] + m[5][k];
        }
    free(t);
}

int main(void) {
    static double a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N * N; i++) { a[i] = rnd(); b[i] = rnd(); }
    strassen(N, a, N, b, N, c, N);
    double sum = 0.0, trace = 0.0;
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { sum += c[i * N + j]; if (i == j) trace += c[i * N + j]; }
    printf("checksum: %.9f %.9f\n", sum, trace);
    return 0;
}
