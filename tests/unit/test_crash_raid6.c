/*
 * test_crash_raid6: test_crash's power cut after every write, for its
 * RAID 6 and fresh (direct stripe) configurations - the half of its time
 * that runs here, beside the other half (scripts/run-unit.sh runs the
 * binaries in parallel).  The tests are test_crash.c's own.
 */
#define CRASH_PART 1
#include "test_crash.c"
