/* Hash table: open addressing with linear probing, 4096 slots. Inserts 2000 keys
 * from a fixed LCG (duplicates add to the stored value), then looks up 2000 keys,
 * half of them inserted ones. Prints hits, sum of found values and probe count. */
#include <stdio.h>
#include <string.h>

#define SLOTS 4096
#define KEYS 2000
#define EMPTY 0u

static unsigned int keys[SLOTS];
static int vals[SLOTS];
static unsigned int inserted[KEYS];
static unsigned int seed = 777u;
static long probes = 0;

static unsigned int lcg(void) { seed = seed * 1664525u + 1013904223u; return seed; }

static unsigned int hash(unsigned int k) {
    k ^= k >> 16;
    k *= 0x45d9f3bu;
    k ^= k >> 16;
    return k & (SLOTS - 1);
}

static void insert(unsigned int k, int v) {
    unsigned int h = hash(k);
    while (keys[h] != EMPTY && keys[h] != k) {
        h = (h + 1) & (SLOTS - 1);
        probes++;
    }
    if (keys[h] == k) {
        vals[h] += v;
    } else {
        keys[h] = k;
        vals[h] = v;
    }
}

static int lookup(unsigned int k, int *v) {
    unsigned int h = hash(k);
    while (keys[h] != EMPTY) {
        if (keys[h] == k) {
            *v = vals[h];
            return 1;
        }
        h = (h + 1) & (SLOTS - 1);
        probes++;
    }
    return 0;
}

int main(void) {
    memset(keys, 0, sizeof keys);
    memset(vals, 0, sizeof vals);
    for (int i = 0; i < KEYS; i++) {
        unsigned int k = (lcg() % 50000u) + 1u;
        inserted[i] = k;
        insert(k, i % 100 + 1);
    }
    int hits = 0;
    long sum = 0;
    for (int i = 0; i < KEYS; i++) {
        unsigned int k = (i % 2 == 0) ? inserted[(i * 7) % KEYS] : (lcg() % 50000u) + 1u;
        int v;
        if (lookup(k, &v)) {
            hits++;
            sum += v;
        }
    }
    printf("checksum: %d %ld %ld\n", hits, sum, probes);
    return 0;
}
