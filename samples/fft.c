/* FFT: iterative radix-2 Cooley-Tukey transform of 1024 complex points (OmpSCR-style).
 * Input is a deterministic mix of two tones plus LCG noise; the checksum is the sum
 * of the magnitudes of the spectrum. */
#include <math.h>
#include <stdio.h>

#define N 1024
#define LOG2N 10

static double re[N], im[N];
static unsigned long long seed = 42ULL;

static double rnd(void) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(seed >> 11) / 9007199254740992.0;
}

static unsigned int reverse_bits(unsigned int x) {
    unsigned int r = 0;
    for (int b = 0; b < LOG2N; b++) { r = (r << 1) | (x & 1u); x >>= 1; }
    return r;
}

static void fft(void) {
    for (unsigned int i = 0; i < N; i++) {
        unsigned int j = reverse_bits(i);
        if (j > i) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (int len = 2; len <= N; len <<= 1) {
        double ang = -2.0 * M_PI / len;
        for (int i = 0; i < N; i += len)
            for (int k = 0; k < len / 2; k++) {
                double wr = cos(ang * k), wi = sin(ang * k);
                int a = i + k, b = i + k + len / 2;
                double xr = re[b] * wr - im[b] * wi;
                double xi = re[b] * wi + im[b] * wr;
                re[b] = re[a] - xr; im[b] = im[a] - xi;
                re[a] += xr; im[a] += xi;
            }
    }
}

int main(void) {
    for (int i = 0; i < N; i++) {
        re[i] = sin(2.0 * M_PI * 5.0 * i / N) + 0.5 * cos(2.0 * M_PI * 40.0 * i / N) + 0.1 * rnd();
        im[i] = 0.0;
    }
    fft();
    double checksum = 0.0;
    for (int i = 0; i < N; i++) checksum += sqrt(re[i] * re[i] + im[i] * im[i]);
    printf("checksum: %.6f\n", checksum);
    return 0;
}
