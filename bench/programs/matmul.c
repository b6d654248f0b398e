/* Dense double matrix multiply, triple loop: N x N (default 90: ~18.65 M traced IR
 * instructions with --no-timing). bench/bench_cli.py (--scale) and bench/bench_budget.py. */
#include <stdio.h>
#ifndef N
#define N 90
#endif
static double a[N][N], b[N][N], c[N][N];
int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) { a[i][j] = (i + 2 * j) % 7 - 3; b[i][j] = (3 * i + j) % 5 - 2; }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < N; k++) s += a[i][k] * b[k][j];
            c[i][j] = s;
        }
    double t = 0.0;
    for (int i = 0; i < N; i++) t += c[i][i];
    printf("trace %.1f\n", t);
    return 0;
}
