/* A description's listing (rig_desc_listing, docs/cli.md "dump"): what
 * progrun dump prints and Python's Description.dump returns. Its every
 * line is matched by the cli and python suites against progrun's output;
 * here, the call itself. */
#include <stdlib.h>
#include <string.h>

#include "desc_gen.h"
#include "rig/rig_desc.h"
#include "rig_test.h"

/* A description of two devices and one input: its counts, every section
 * (empty ones said so), the devices and the input. */
static void test_a_listing_starts_with_the_programs_counts(void) {
  rig_desc *d = rig_desc_create();
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_device(d, "cpu-x86_64");
  rig_desc_add_input(d, 1, 64);
  char *text = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_desc_listing(d, &text, &err), RIG_OK);
  CU_ASSERT_STRING_EQUAL(text, "program: 2 devices, 0 memory, 0 images, 1 input, 0 ints, 0 steps\n"
                               "devices:\n"
                               "  0 x86_64\n"
                               "  1 cpu-x86_64\n"
                               "memory:\n"
                               "  (none)\n"
                               "images:\n"
                               "  (none)\n"
                               "inputs:\n"
                               "  0 device 1, 64 bytes\n"
                               "steps:\n"
                               "  (none)\n");
  free(text);
  rig_desc_free(d);
}

/* Any description, ill-formed ones included, lists whole: text that ends
 * in a newline and holds no NUL before its end. */
static void test_any_description_lists_whole(void) {
  rig_rng r = {7};
  size_t bad = 0;
  for (int i = 0; i < 300; i++) {
    rig_desc *d = rig_gen_desc(&r, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    char *text = NULL;
    rig_error err;
    if (rig_desc_listing(d, &text, &err) != RIG_OK || !text || !*text ||
        text[strlen(text) - 1] != '\n')
      bad++;
    free(text);
    rig_desc_free(d);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

void rig_test_register(void) {
  static CU_TestInfo tests[] = {{"a listing starts with the program's counts",
                                 test_a_listing_starts_with_the_programs_counts},
                                {"any description lists whole", test_any_description_lists_whole},
                                CU_TEST_INFO_NULL};
  rig_test_add_suite("listing", tests);
}
