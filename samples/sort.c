/* Sort: recursive top-down merge sort of 600 ints drawn from a fixed LCG, with a
 * scratch buffer from malloc. Checks the result is ordered and prints a position-
 * weighted checksum. Deterministic. */
#include <stdio.h>
#include <stdlib.h>

#define COUNT 600

static unsigned int seed = 2024u;

static unsigned int lcg(void) { seed = seed * 1103515245u + 12345u; return (seed >> 16) & 0x7fff; }

static void merge_sort(int *v, int *tmp, int lo, int hi) {
    if (hi - lo < 2)
        return;
    int mid = lo + (hi - lo) / 2;
    merge_sort(v, tmp, lo, mid);
    merge_sort(v, tmp, mid, hi);
    int i = lo, j = mid, k = lo;
    while (i < mid && j < hi)
        tmp[k++] = (v[i] <= v[j]) ? v[i++] : v[j++];
    while (i < mid)
        tmp[k++] = v[i++];
    while (j < hi)
        tmp[k++] = v[j++];
    for (k = lo; k < hi; k++)
        v[k] = tmp[k];
}

int main(void) {
    int *v = malloc(COUNT * sizeof(int));
    int *tmp = malloc(COUNT * sizeof(int));
    for (int i = 0; i < COUNT; i++)
        v[i] = (int)(lcg() % 10007);
    merge_sort(v, tmp, 0, COUNT);
    int ordered = 1;
    unsigned long sum = 0;
    for (int i = 0; i < COUNT; i++) {
        if (i > 0 && v[i - 1] > v[i])
            ordered = 0;
        sum += (unsigned long)v[i] * (unsigned long)(i % 97 + 1);
    }
    printf("checksum: %lu %d %d %d\n", sum, ordered, v[0], v[COUNT - 1]);
    free(tmp);
    free(v);
    return 0;
}
