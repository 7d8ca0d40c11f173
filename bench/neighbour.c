/*
 * neighbour.c - a memory-streaming neighbour: reads and writes one word per 64-byte line of a
 * buffer far larger than the last-level cache, forever, so that every access misses it. Run
 * on the other CPU while a case is timed (bench/ab.sh's AB_NEIGHBOUR), it reproduces on demand
 * what the shared host's slow spells do to onnxrun: the traffic of other tenants evicting the
 * caches and taking memory bandwidth, while the FMA units stay free.
 *
 * Usage: neighbour [MiB]   (default 256)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const long mib = argc > 1 ? atol(argv[1]) : 256;
	if (mib <= 0) {
		fprintf(stderr, "usage: neighbour [MiB > 0]\n");
		return 2;
	}
	const size_t n = (size_t)mib << 20;
	volatile uint64_t *p = malloc(n);
	if (!p) {
		fprintf(stderr, "neighbour: cannot allocate %ld MiB\n", mib);
		return 1;
	}
	memset((void *)p, 1, n);
	for (;;)
		for (size_t i = 0; i < n / sizeof *p; i += 64 / sizeof *p)
			p[i] += 1;
}
