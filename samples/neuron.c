/* Neuron: one layer of 64 ReLU neurons with 32 inputs each, evaluated on 8
 * deterministic input vectors. Checksum: the sum of all activations. */
#include <stdio.h>

#define NEURONS 64
#define INPUTS 32
#define SAMPLES 8

static double weight[NEURONS][INPUTS], bias[NEURONS];
static unsigned long long seed = 5ULL;

static double rnd(void) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(seed >> 11) / 9007199254740992.0 - 0.5;
}

static double relu(double v) { return v > 0.0 ? v : 0.0; }

int main(void) {
    for (int n = 0; n < NEURONS; n++) {
        bias[n] = rnd();
        for (int i = 0; i < INPUTS; i++) weight[n][i] = rnd();
    }
    double checksum = 0.0;
    for (int s = 0; s < SAMPLES; s++) {
        double x[INPUTS];
        for (int i = 0; i < INPUTS; i++) x[i] = rnd();
        for (int n = 0; n < NEURONS; n++) {
            double acc = bias[n];
            for (int i = 0; i < INPUTS; i++) acc += weight[n][i] * x[i];
            checksum += relu(acc);
        }
    }
    printf("checksum: %.9f\n", checksum);
    return 0;
}
