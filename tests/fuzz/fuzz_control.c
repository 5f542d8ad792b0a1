/* libFuzzer harness of the live view's control messages (src/record/record_control.c): every
 * input is one text message from a page, as the WebSocket server hands it over, parsed by
 * tl_ctl_parse against a world of two quadrupeds (robots/worlds/two_quadrupeds.xml, so body
 * names of two systems resolve) and two declared parameters. Invariants:
 *   - the result is MALFORMED, QUERY or EVENT; a MALFORMED one has a non-empty, terminated reason;
 *   - an EVENT lies within the documented ranges of tl_viewer_event (talus/record.h): steps
 *     1 .. TL_VIEWER_MAX_STEP, speed 0 or within [MIN, MAX], a force's system and body exist,
 *     its numbers finite and bounded, duration in (0, MAX]; a param names a declared parameter
 *     and its value is within that parameter's range;
 *   - the event goes through the queue unchanged (push then pop);
 *   - the status message is valid JSON (cJSON) with the counters the server sends.
 * Seeds: tests/fuzz/seeds/control/ (the protocol's message types, docs/viewer.md). */
#include "fuzz_util.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "record/record_control.h"
#include "talus/model.h"
#include "talus/scene.h"
#include "talus/system.h"
#include "talus/world.h"

static tl_world *world;
static tl_live_control *ctl;
static const tl_viewer_param params[2] = {{"gain_scale", "", 0.0, 2.0, 1.0}, {"speed", "m/s", -1.0, 1.0, 0.0}};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  tl_error err;
  memset(&err, 0, sizeof err);
  FUZZ_ASSERT(tl_scene_load(TALUS_SOURCE_DIR "/robots/worlds/two_quadrupeds.xml", &world, NULL, &err) == TL_OK,
              "cannot load the harness's world: %s", err.message);
  FUZZ_ASSERT((ctl = tl_ctl_create(world)) != NULL, "out of memory");
  FUZZ_ASSERT(tl_ctl_set_params(ctl, params, 2, &err) == TL_OK, "params refused: %s", err.message);
  return 0;
}

static void check_event(const tl_viewer_event *e) {
  switch (e->type) {
  case TL_VIEWER_EVENT_STEP:
    FUZZ_ASSERT(e->n >= 1 && e->n <= TL_VIEWER_MAX_STEP, "step n = %lld", e->n);
    break;
  case TL_VIEWER_EVENT_SPEED:
    FUZZ_ASSERT(e->factor == 0 || (e->factor >= TL_VIEWER_MIN_SPEED && e->factor <= TL_VIEWER_MAX_SPEED),
                "speed factor %g", e->factor);
    break;
  case TL_VIEWER_EVENT_FORCE: {
    FUZZ_ASSERT(e->system >= 0 && e->system < tl_world_nsystem(world), "force system %d", e->system);
    const tl_model *m = tl_system_model(tl_world_system(world, e->system));
    FUZZ_ASSERT(e->body >= 0 && e->body < tl_model_nbody(m), "force body %d", e->body);
    FUZZ_ASSERT(e->id >= 0 && e->id <= 15, "force id %d", e->id);
    for (int k = 0; k < 3; k++) {
      FUZZ_ASSERT(isfinite(e->point[k]) && fabs(e->point[k]) <= TL_VIEWER_MAX_POINT, "point %g", e->point[k]);
      FUZZ_ASSERT(isfinite(e->force[k]) && fabs(e->force[k]) <= TL_VIEWER_MAX_FORCE, "force %g", e->force[k]);
    }
    FUZZ_ASSERT(e->duration > 0 && e->duration <= TL_VIEWER_MAX_DURATION, "duration %g", e->duration);
    break;
  }
  case TL_VIEWER_EVENT_PARAM: {
    FUZZ_ASSERT(memchr(e->name, '\0', sizeof e->name) != NULL, "unterminated parameter name");
    int found = 0;
    for (int k = 0; k < 2; k++)
      if (strcmp(e->name, params[k].name) == 0) {
        found = 1;
        FUZZ_ASSERT(e->value >= params[k].min && e->value <= params[k].max, "%s = %g", e->name, e->value);
      }
    FUZZ_ASSERT(found, "undeclared parameter '%s'", e->name);
    break;
  }
  case TL_VIEWER_EVENT_RESTORE:
    FUZZ_ASSERT(e->n >= 0 && e->n < TL_VIEWER_MAX_SNAPSHOTS, "restore n = %lld", e->n);
    break;
  case TL_VIEWER_EVENT_PAUSE:
  case TL_VIEWER_EVENT_RUN:
  case TL_VIEWER_EVENT_RESET:
  case TL_VIEWER_EVENT_SNAPSHOT:
    break;
  default:
    FUZZ_ASSERT(0, "event type %d", (int)e->type);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tl_viewer_event ev, back;
  memset(&ev, 0, sizeof ev);
  char why[256];
  memset(why, 'x', sizeof why);
  tl_ctl_kind kind = tl_ctl_parse(ctl, (const char *)data, size, &ev, why, sizeof why);
  FUZZ_ASSERT(kind == TL_CTL_MALFORMED || kind == TL_CTL_QUERY || kind == TL_CTL_EVENT, "kind %d", (int)kind);
  if (kind == TL_CTL_MALFORMED) {
    FUZZ_ASSERT(memchr(why, '\0', sizeof why) != NULL && why[0] != '\0', "malformed without a reason");
    tl_ctl_count_dropped(ctl);
  } else if (kind == TL_CTL_EVENT) {
    check_event(&ev);
    FUZZ_ASSERT(tl_ctl_push(ctl, &ev) == 0, "queue full after popping everything");
    FUZZ_ASSERT(tl_ctl_pop(ctl, &back) == 1 && memcmp(&ev, &back, sizeof ev) == 0, "queue changed the event");
  }
  char status[TL_CTL_STATUS_CAP];
  size_t n = tl_ctl_status_json(ctl, kind == TL_CTL_MALFORMED ? why : NULL, 1, 1, status, sizeof status);
  FUZZ_ASSERT(n < sizeof status && status[n] == '\0', "status length %zu", n);
  cJSON *j = cJSON_Parse(status);
  FUZZ_ASSERT(j != NULL, "status is not JSON: %s", status);
  FUZZ_ASSERT(cJSON_IsString(cJSON_GetObjectItem(j, "type")), "status without a type: %s", status);
  cJSON_Delete(j);
  return 0;
}
