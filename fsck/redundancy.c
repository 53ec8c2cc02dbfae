/*
 * redundancy: phase 2 (after rebuild.c's rebuilds, if any).
 *
 * rc_scrub reads every stripe, checks every block against its checksum and
 * every row's parity (or copies) against its data; with a checksum it
 * knows which member's block is wrong and (unless -n) rewrites exactly
 * that one.  The per-member counts come from rc_array_member_status.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fsck.h"
#include "bdev.h"
#include "fs.h"

#define BAD_MAX 65536           /* blocks listed for phase 4 */

struct counts {
	uint64_t read, csum, write, repaired;
};

static void counts_get(struct fsck *f, struct counts *c)
{
	struct rc_member_status st;

	for (uint32_t s = 0; s < f->info.members; s++) {
		memset(&c[s], 0, sizeof(c[s]));
		if (rc_array_member_status(f->array, (int)s, &st))
			continue;
		c[s] = (struct counts){ st.read_errors, st.csum_errors,
					st.write_errors, st.repaired };
	}
}

/* What this check found on each member, and what the member has on
 * record (the superblock's counters, kept across assemblies). */
static void member_counts(struct fsck *f, const struct counts *before)
{
	struct counts now[RC_MAX_MEMBERS];
	struct rc_member_status st;

	counts_get(f, now);
	for (uint32_t s = 0; s < f->info.members; s++) {
		uint64_t r = now[s].read - before[s].read;
		uint64_t c = now[s].csum - before[s].csum;
		uint64_t w = now[s].write - before[s].write;
		uint64_t p = now[s].repaired - before[s].repaired;

		if (rc_array_member_status(f->array, (int)s, &st))
			continue;
		if (!r && !c && !w && !p && !f->o.verbose)
			continue;
		fsck_msg("  slot %u (%s): %llu read errors, %llu checksum "
			 "errors, %llu write errors, %llu blocks repaired "
			 "(on record: %llu, %llu, %llu, %llu)", s,
			 st.name[0] ? st.name : "missing",
			 (unsigned long long)r, (unsigned long long)c,
			 (unsigned long long)w, (unsigned long long)p,
			 (unsigned long long)now[s].read,
			 (unsigned long long)now[s].csum,
			 (unsigned long long)now[s].write,
			 (unsigned long long)now[s].repaired);
	}
}

int fsck_redundancy(struct fsck *f)
{
	bool repair = f->o.mode != FSCK_MODE_NO;
	struct fsck_progress p;
	struct counts before[RC_MAX_MEMBERS];
	struct rc_scrub_report r;
	double t0;
	int ret;

	fsck_phase(2, "Redundancy (parity, copies, checksums)");
	counts_get(f, before);
	fsck_progress_init(&p, "scrub", fsck_member_bytes(&f->info), !repair);
	t0 = fsck_now();
	f->bad = calloc(BAD_MAX, sizeof(*f->bad));
	ret = rc_scrub_list(f->array, repair, &r, f->bad, f->bad ? BAD_MAX : 0,
			    fsck_progress_cb, &p);
	f->nbad = f->bad ? (r.nbad < BAD_MAX ? r.nbad : BAD_MAX) : 0;
	fsck_progress_end(&p);
	if (ret) {
		fsck_err("scrub failed: %s", strerror(-ret));
		return ret;
	}
	t0 = fsck_now() - t0;
	fsck_msg("  %llu stripes in %.2f s (%.0f MiB/s of members): %llu "
		 "checksum errors, %llu read errors, %llu blocks without a valid "
		 "checksum entry, %llu parity mismatches, %llu repaired, %llu "
		 "entries re-derived, %llu unrecoverable",
		 (unsigned long long)r.stripes, t0,
		 t0 > 0 ? (double)fsck_member_bytes(&f->info) / t0 / (1 << 20) : 0.0,
		 (unsigned long long)r.csum_errors,
		 (unsigned long long)r.read_errors,
		 (unsigned long long)r.unverified,
		 (unsigned long long)r.parity_mismatches,
		 (unsigned long long)r.repaired,
		 (unsigned long long)r.entries_fixed,
		 (unsigned long long)r.unrecoverable);
	member_counts(f, before);
	f->unrecoverable += r.unrecoverable;
	f->mismatches += r.parity_mismatches;
	f->conflicts += r.conflicts;
	if (!repair)
		f->unverified += r.unverified;
	if (r.parity_mismatches)
		fsck_msg("  %llu stripes hold blocks that all verify against their "
			 "checksums while their parity disagrees: which one is "
			 "wrong cannot be told, so nothing was rewritten there; "
			 "those stripes cannot be rebuilt if a member is lost",
			 (unsigned long long)r.parity_mismatches);
	if (r.conflicts)
		fsck_msg("  %llu blocks whose checksum, contents and "
			 "redundancy all disagree were left as they are",
			 (unsigned long long)r.conflicts);
	/* Blocks it could not rebuild: phase 4 decides (those in free space
	 * are rewritten by -y and -p). */
	if (r.parity_mismatches && repair)
		f->mismatch_pending = true;
	if ((r.parity_mismatches && !repair) ||
	    ((r.unrecoverable || r.conflicts) && !repair))
		f->status |= FSCK_UNCORRECTED;
	f->bad_all = r.nbad <= f->nbad;
	if (r.csum_errors + r.read_errors + r.unverified > r.unrecoverable)
		f->status |= repair ? FSCK_CORRECTED : FSCK_UNCORRECTED;
	/* What to do about it: what phase 1 planned for fsck -y, unless
	 * some slot has nothing to be rebuilt onto. */
	if (f->info.degraded) {
		fsck_msg("  the array is DEGRADED: every block was read through "
			 "reconstruction; %s",
			 f->o.mode != FSCK_MODE_YES && !f->unplanned &&
			 !f->o.rebuild ? "fsck -y rebuilds it as phase 1 says" :
			 "replace the missing member with --rebuild");
		/* -p is the boot's check: an array that lost no more than
		 * its redundancy, every block read, is not a filesystem
		 * error; the boot goes on and mounts it degraded, as mdadm
		 * assembles a degraded array at boot and ZFS imports a
		 * degraded pool.  Exit 4 stopped the boot at an emergency
		 * shell over one dead disk (a tester's note). */
		if (f->o.mode == FSCK_MODE_PREEN)
			fsck_msg("  WARNING: the array runs degraded until "
				 "the member is replaced (raidfsctl add, or "
				 "fsck -y --rebuild); -p leaves it so");
		else
			f->status |= FSCK_UNCORRECTED;
	}
	return 0;
}
