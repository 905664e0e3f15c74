/* test_vk_nodevice.c - no Vulkan driver (run with VK_ICD_FILENAMES and
 * VK_DRIVER_FILES pointing nowhere): a clear NN_ERR_NO_DEVICE, no crash, no
 * context left behind, no leak, also when asked many times. */
#include "vk_test_util.h"

int main(void) {
  vt_install_allocator();
  size_t heap0 = vt_heap_current();
  nn_error e = {0};
  for (int i = 0; i < 100; i++) {
    nn_vk_ctx *c = (nn_vk_ctx *)&e;
    nn_status st = nn_vk_ctx_acquire(&c, &e);
    VT_CHECK(st == NN_ERR_NO_DEVICE);
    VT_CHECK(c == NULL);
    VT_CHECK(e.status == NN_ERR_NO_DEVICE);
    VT_CHECK(strstr(e.msg, "vulkan") != NULL);
    if (i == 0)
      printf("acquire: %s: %s\n", nn_status_str(st), e.msg);
    VT_CHECK(!nn_vk_ctx_alive());
  }
  VT_CHECK(nn_vulkan_available(&e) == NN_ERR_NO_DEVICE);
  printf("nn_vulkan_available: %s\n", e.msg);
  VT_CHECK(vt_heap_current() == heap0);
  /* nothing stays pinned: the allocator can be changed again */
  VT_CHECK(nn_set_allocator(NULL) == NN_OK);
  /* The loader's own "no driver" report is the expected outcome here
   * (general messages); nothing may come from validation. */
  VT_CHECK(nn_vk_validation_messages() == 0);
  printf("test_vk_nodevice: %s (%d failure(s), %llu loader messages)\n",
         vt_failures ? "FAIL" : "PASS", vt_failures,
         (unsigned long long)nn_vk_general_messages());
  return vt_failures ? 1 : 0;
}
