/* A description's graph (rig_desc_dot, rig_desc_dot_graph; docs/cli.md
 * "dot"): what progrun dot prints and Python's Description.dot returns.
 * The cli suite matches the drawing of whole programs and job files
 * against progrun's output; here, the calls themselves. */
#include <stdlib.h>
#include <string.h>

#include "desc_gen.h"
#include "rig/rig_desc.h"
#include "rig_test.h"

/* Two Moves on one device: input 0 into memory 0, then memory 0 into
 * memory 1, a rail's Outbound area (the second sends on rail 1). */
static rig_desc *two_moves(void) {
  rig_desc *d = rig_desc_create();
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_alloc(d, 0, RIG_KIND_PINNED, 64, RIG_COPIES_ONE);
  rig_desc_add_rail(d, 1, RIG_AREA_OUTBOUND);
  rig_desc_add_input(d, 0, 64);
  rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(0, 0, 64), 64);
  rig_desc_add_move(d, NULL, rig_desc_slot_memory(0, 0, 64), rig_desc_slot_memory(1, 0, 64), 64);
  return d;
}

/* The whole digraph: its head, a node per step naming both ends of a
 * Move and its bytes, a rail's memory naming its rail and area, and an
 * edge from a write to the read that follows it, saying why. */
static void test_a_graph_draws_each_step_and_what_it_follows(void) {
  rig_desc *d = two_moves();
  char *text = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_desc_dot(d, false, &text, &err), RIG_OK);
  CU_ASSERT_STRING_EQUAL(
      text, "digraph program {\n" RIG_DESC_DOT_HEAD
            "  s0 [label=\"step 0: Move\\ninput 0 → memory 0\\n64 bytes\", style=rounded];\n"
            "  s1 [label=\"step 1: Move\\nmemory 0 → memory 1 (rail 1 Outbound)\\n64 bytes\", "
            "style=rounded];\n"
            "  s0 -> s1 [label=\"memory 0: Read after Write\"];\n"
            "}\n");
  free(text);
  rig_desc_free(d);
}

/* In pieces, for a drawing of several: nodes indented by `depth`, every
 * name after the prefix, edges apart, and the nodes at a rail's ends
 * found by name (none where no node uses that end). */
static void test_a_graph_in_pieces_names_its_nodes_and_rail_ends(void) {
  rig_desc *d = two_moves();
  rig_desc_dot_style style = {.prefix = "m1_", .depth = 2};
  char *nodes = NULL, *edges = NULL;
  rig_desc_graph *g = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_desc_dot_graph(d, &style, &nodes, &edges, &g, &err), RIG_OK);
  CU_ASSERT_EQUAL(strncmp(nodes, "    m1_s0 [label=\"step 0: Move", 30), 0);
  CU_ASSERT_STRING_EQUAL(edges, "  m1_s0 -> m1_s1 [label=\"memory 0: Read after Write\"];\n");
  CU_ASSERT_STRING_EQUAL(rig_desc_graph_rail_end(g, 1, true), "s1");
  CU_ASSERT_PTR_NULL(rig_desc_graph_rail_end(g, 1, false));
  CU_ASSERT_PTR_NULL(rig_desc_graph_rail_end(g, 2, true));
  free(nodes);
  free(edges);
  rig_desc_graph_free(g);
  rig_desc_free(d);
}

/* Whether d's graph (every edge, or the reduced) is a whole digraph: its
 * opening line, and its closing brace last. */
static bool draws_whole(const rig_desc *d, bool all) {
  char *text = NULL;
  rig_error err;
  bool whole = rig_desc_dot(d, all, &text, &err) == RIG_OK && text &&
               strncmp(text, "digraph program {\n", 18) == 0 && strlen(text) >= 2 &&
               strcmp(text + strlen(text) - 2, "}\n") == 0;
  free(text);
  return whole;
}

/* Any description, ill-formed ones included, draws whole, with every edge
 * and without. */
static void test_any_description_draws_whole(void) {
  rig_rng r = {11};
  size_t bad = 0;
  for (int i = 0; i < 300; i++) {
    rig_desc *d = rig_gen_desc(&r, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    bad += !draws_whole(d, false) + !draws_whole(d, true);
    rig_desc_free(d);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

void rig_test_register(void) {
  static CU_TestInfo tests[] = {{"a graph draws each step and what it follows",
                                 test_a_graph_draws_each_step_and_what_it_follows},
                                {"a graph in pieces names its nodes and rail ends",
                                 test_a_graph_in_pieces_names_its_nodes_and_rail_ends},
                                {"any description draws whole", test_any_description_draws_whole},
                                CU_TEST_INFO_NULL};
  rig_test_add_suite("dot", tests);
}
