/* Talus: articulated-robot simulation in generalized coordinates. Umbrella header. */
#ifndef TALUS_TALUS_H
#define TALUS_TALUS_H

#include "talus/types.h"
#include "talus/model.h"
#include "talus/urdf.h"
#include "talus/system.h"
#include "talus/contact.h"
#include "talus/world.h"
#include "talus/constraint.h"
#include "talus/scene.h"
#include "talus/engine.h"
#include "talus/engine_plugin.h"
#include "talus/record.h"
#include "talus/viewer.h"
#include "talus/rng.h"
#include "talus/batch.h"
#include "talus/task.h"
#include "talus/vecenv.h"
#include "talus/onboard.h"
#include "talus/metrics.h"
#include "talus/render.h"
#include "talus/limits.h"
#include "talus/sweep.h"

#define TALUS_VERSION "0.1.0"

#endif
