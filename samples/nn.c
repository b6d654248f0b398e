/* NN: forward pass of a fully connected network with three hidden layers
 * (16 -> 32 -> 32 -> 32 -> 4, ReLU hidden units, softmax output) over a batch
 * of 4 deterministic inputs. Checksum: the sum of output probabilities times
 * their class index. */
#include <math.h>
#include <stdio.h>

#define IN 16
#define HID 32
#define OUT 4
#define BATCH 4

static double w1[HID][IN], b1[HID], w2[HID][HID], b2[HID], w3[HID][HID], b3[HID];
static double w4[OUT][HID], b4[OUT];
static unsigned long long seed = 99ULL;

static double rnd(void) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(seed >> 11) / 9007199254740992.0 - 0.5;
}

static void dense(int n_in, int n_out, const double *w, const double *b, const double *x, double *y, int relu) {
    for (int o = 0; o < n_out; o++) {
        double s = b[o];
        for (int i = 0; i < n_in; i++) s += w[o * n_in + i] * x[i];
        y[o] = (relu && s < 0.0) ? 0.0 : s;
    }
}

int main(void) {
    double *params[] = {&w1[0][0], b1, &w2[0][0], b2, &w3[0][0], b3, &w4[0][0], b4};
    int sizes[] = {HID * IN, HID, HID * HID, HID, HID * HID, HID, OUT * HID, OUT};
    for (int p = 0; p < 8; p++) for (int i = 0; i < sizes[p]; i++) params[p][i] = rnd();
    double checksum = 0.0;
    for (int s = 0; s < BATCH; s++) {
        double x[IN], h1[HID], h2[HID], h3[HID], out[OUT];
        for (int i = 0; i < IN; i++) x[i] = rnd() * 2.0;
        dense(IN, HID, &w1[0][0], b1, x, h1, 1);
        dense(HID, HID, &w2[0][0], b2, h1, h2, 1);
        dense(HID, HID, &w3[0][0], b3, h2, h3, 1);
        dense(HID, OUT, &w4[0][0], b4, h3, out, 0);
        double mx = out[0], z = 0.0;
        for (int o = 1; o < OUT; o++) if (out[o] > mx) mx = out[o];
        for (int o = 0; o < OUT; o++) { out[o] = exp(out[o] - mx); z += out[o]; }
        for (int o = 0; o < OUT; o++) checksum += (o + 1) * out[o] / z;
    }
    printf("checksum: %.9f\n", checksum);
    return 0;
}
