/* MD: one velocity-Verlet step of 512 particles in 3-D (OmpSCR md-style
 * potential v(d) = sin^2(min(d, pi/2))) with a short-range cutoff: particles
 * start on a jittered 8 x 8 x 8 lattice and interact with the particles of
 * the 26 surrounding lattice cells. Checksum: potential and kinetic energy
 * and the sum of the new positions. */
#include <math.h>
#include <stdio.h>

#define SIDE 8
#define NP (SIDE * SIDE * SIDE)
#define DIM 3

static double pos[NP][DIM], vel[NP][DIM], acc[NP][DIM], force[NP][DIM];
static unsigned long long seed = 2024ULL;

static double rnd(void) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(seed >> 11) / 9007199254740992.0;
}

static double v(double x) { double s = sin(fmin(x, M_PI_2)); return s * s; }
static double dv(double x) { return 2.0 * sin(fmin(x, M_PI_2)) * cos(fmin(x, M_PI_2)); }

static int cell(int x, int y, int z) { return (x * SIDE + y) * SIDE + z; }

static void compute(double *pot, double *kin) {
    *pot = 0.0;
    *kin = 0.0;
    for (int x = 0; x < SIDE; x++)
        for (int y = 0; y < SIDE; y++)
            for (int z = 0; z < SIDE; z++) {
                int i = cell(x, y, z);
                for (int k = 0; k < DIM; k++) force[i][k] = 0.0;
                for (int dx = -1; dx <= 1; dx++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dz = -1; dz <= 1; dz++) {
                            int nx = x + dx, ny = y + dy, nz = z + dz;
                            if ((dx | dy | dz) == 0 || nx < 0 || ny < 0 || nz < 0 ||
                                nx >= SIDE || ny >= SIDE || nz >= SIDE)
                                continue;
                            int j = cell(nx, ny, nz);
                            double rij[DIM], d = 0.0;
                            for (int k = 0; k < DIM; k++) { rij[k] = pos[i][k] - pos[j][k]; d += rij[k] * rij[k]; }
                            d = sqrt(d);
                            *pot += 0.5 * v(d);
                            for (int k = 0; k < DIM; k++) force[i][k] -= rij[k] * dv(d) / d;
                        }
                for (int k = 0; k < DIM; k++) *kin += vel[i][k] * vel[i][k];
            }
    *kin *= 0.5;
}

int main(void) {
    const double dt = 1e-4, mass = 1.0;
    for (int x = 0; x < SIDE; x++)
        for (int y = 0; y < SIDE; y++)
            for (int z = 0; z < SIDE; z++) {
                int i = cell(x, y, z);
                pos[i][0] = x + 0.3 * rnd();
                pos[i][1] = y + 0.3 * rnd();
                pos[i][2] = z + 0.3 * rnd();
                for (int k = 0; k < DIM; k++) { vel[i][k] = 0.1 * (rnd() - 0.5); acc[i][k] = 0.0; }
            }
    double pot, kin;
    compute(&pot, &kin);
    for (int i = 0; i < NP; i++)
        for (int k = 0; k < DIM; k++) {
            pos[i][k] += vel[i][k] * dt + 0.5 * dt * dt * acc[i][k];
            vel[i][k] += 0.5 * dt * (force[i][k] / mass + acc[i][k]);
            acc[i][k] = force[i][k] / mass;
        }
    double sum = 0.0;
    for (int i = 0; i < NP; i++) for (int k = 0; k < DIM; k++) sum += pos[i][k];
    printf("checksum: %.6f %.9f %.6f\n", pot, kin, sum);
    return 0;
}
