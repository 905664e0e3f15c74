/* placeholder */
#include "nn_internal.h"
