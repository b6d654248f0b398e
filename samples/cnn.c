/* CNN: Conv-Pool-Conv-Pool-FC inference on one 16 x 16 input.
 * conv1: 4 filters 3x3 -> 14x14x4, ReLU; max-pool 2x2 -> 7x7x4;
 * conv2: 8 filters 3x3x4 -> 5x5x8, ReLU; max-pool 2x2 -> 2x2x8;
 * fully connected 32 -> 10. Checksum: the sum of the 10 outputs and the index
 * of the largest. */
#include <stdio.h>

static double input[16][16];
static double k1[4][3][3], c1[4][14][14], p1[4][7][7];
static double k2[8][4][3][3], c2[8][5][5], p2[8][2][2];
static double fw[10][32], fb[10], out[10];
static unsigned long long seed = 31ULL;

static double rnd(void) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(seed >> 11) / 9007199254740992.0 - 0.5;
}

static double relu(double v) { return v > 0.0 ? v : 0.0; }

int main(void) {
    for (int y = 0; y < 16; y++) for (int x = 0; x < 16; x++) input[y][x] = rnd();
    for (int f = 0; f < 4; f++) for (int a = 0; a < 3; a++) for (int b = 0; b < 3; b++) k1[f][a][b] = rnd();
    for (int f = 0; f < 8; f++) for (int c = 0; c < 4; c++) for (int a = 0; a < 3; a++) for (int b = 0; b < 3; b++) k2[f][c][a][b] = rnd();
    for (int o = 0; o < 10; o++) { fb[o] = rnd(); for (int i = 0; i < 32; i++) fw[o][i] = rnd(); }

    for (int f = 0; f < 4; f++)
        for (int y = 0; y < 14; y++)
            for (int x = 0; x < 14; x++) {
                double s = 0.0;
                for (int a = 0; a < 3; a++) for (int b = 0; b < 3; b++) s += k1[f][a][b] * input[y + a][x + b];
                c1[f][y][x] = relu(s);
            }
    for (int f = 0; f < 4; f++)
        for (int y = 0; y < 7; y++)
            for (int x = 0; x < 7; x++) {
                double m = c1[f][2 * y][2 * x];
                for (int a = 0; a < 2; a++) for (int b = 0; b < 2; b++)
                    if (c1[f][2 * y + a][2 * x + b] > m) m = c1[f][2 * y + a][2 * x + b];
                p1[f][y][x] = m;
            }
    for (int f = 0; f < 8; f++)
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 5; x++) {
                double s = 0.0;
                for (int c = 0; c < 4; c++) for (int a = 0; a < 3; a++) for (int b = 0; b < 3; b++)
                    s += k2[f][c][a][b] * p1[c][y + a][x + b];
                c2[f][y][x] = relu(s);
            }
    for (int f = 0; f < 8; f++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 2; x++) {
                double m = c2[f][2 * y][2 * x];
                for (int a = 0; a < 2; a++) for (int b = 0; b < 2; b++)
                    if (c2[f][2 * y + a][2 * x + b] > m) m = c2[f][2 * y + a][2 * x + b];
                p2[f][y][x] = m;
            }
    double checksum = 0.0;
    int best = 0;
    for (int o = 0; o < 10; o++) {
        double s = fb[o];
        for (int i = 0; i < 32; i++) s += fw[o][i] * p2[i / 4][(i / 2) % 2][i % 2];
        out[o] = s;
        checksum += s;
        if (out[o] > out[best]) best = o;
    }
    printf("checksum: %.9f %d\n", checksum, best);
    return 0;
}
