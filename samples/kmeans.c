/* K-means: Lloyd's algorithm on 128 deterministic 2-D tuples, 4 clusters,
 * 10 iterations. Checksum: the sum of the final centroid coordinates plus the
 * number of points in each cluster weighted by its index. */
#include <stdio.h>

#define POINTS 128
#define K 4
#define ITERS 10

static double px[POINTS], py[POINTS];
static double cx[K], cy[K];
static int label[POINTS];
static unsigned long long seed = 7ULL;

static double rnd(void) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(seed >> 11) / 9007199254740992.0;
}

int main(void) {
    for (int i = 0; i < POINTS; i++) {
        int blob = i % K;
        px[i] = 10.0 * blob + 3.0 * rnd();
        py[i] = 5.0 * (blob % 2) + 3.0 * rnd();
    }
    for (int c = 0; c < K; c++) { cx[c] = px[c * 7]; cy[c] = py[c * 7]; }
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < POINTS; i++) {
            int best = 0;
            double bd = 1e300;
            for (int c = 0; c < K; c++) {
                double dx = px[i] - cx[c], dy = py[i] - cy[c];
                double d = dx * dx + dy * dy;
                if (d < bd) { bd = d; best = c; }
            }
            label[i] = best;
        }
        double sx[K] = {0}, sy[K] = {0};
        int n[K] = {0};
        for (int i = 0; i < POINTS; i++) { sx[label[i]] += px[i]; sy[label[i]] += py[i]; n[label[i]]++; }
        for (int c = 0; c < K; c++) if (n[c] > 0) { cx[c] = sx[c] / n[c]; cy[c] = sy[c] / n[c]; }
    }
    double checksum = 0.0;
    int count[K] = {0};
    for (int i = 0; i < POINTS; i++) count[label[i]]++;
    for (int c = 0; c < K; c++) checksum += cx[c] + cy[c] + (c + 1) * count[c];
    printf("checksum: %.6f\n", checksum);
    return 0;
}
