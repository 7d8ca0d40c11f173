/*
 * cycles.c - see cycles.h.
 */
#include "cycles.h"

#define SYST_CSR (*(volatile uint32_t *)0xe000e010u)
#define SYST_RVR (*(volatile uint32_t *)0xe000e014u)
#define SYST_CVR (*(volatile uint32_t *)0xe000e018u)
#define WRAP (1u << 24)

static volatile uint32_t wraps;

void SysTick_Handler(void);
void SysTick_Handler(void)
{
	wraps++;
}

void cycles_start(void)
{
	SYST_RVR = WRAP - 1;
	SYST_CVR = 0;
	SYST_CSR = 7; /* processor clock, interrupt on wrap, enabled */
	while (SYST_CVR == 0) /* until the first tick has loaded the counter */
		;
}

uint64_t cycles_now(void)
{
	uint32_t w, v;
	do {
		w = wraps;
		v = SYST_CVR;
	} while (w != wraps);
	return (uint64_t)w * WRAP + (WRAP - 1 - v);
}
