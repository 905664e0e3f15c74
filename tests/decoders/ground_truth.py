"""Hand-made ground truth for the real-media tests (stdlib only).

astronaut.png (512x512, scikit-image's sample "astronaut"): one face.
  FACE_BOX = (x0, y0, x1, y1) = (183, 78, 269, 180).  Labelled by eye on the
  image zoomed 5x with a grid line every 4 pixels (stronger every 16):
    left   x=183  the left cheek contour (viewer's left) at eye level, where
                  skin meets hair;
    right  x=269  the right cheek contour at eye level;
    top    y=78   the hairline (bottom of the fringe) above the middle of
                  the forehead;
    bottom y=180  the lowest point of the chin.
  (The eyes are at about (201, 101) and (247, 103).)

Megamind.avi (OpenCV sample, 720x528, 270 frames at 23.976 fps).  Counted by
hand: every frame was decoded and looked at on contact sheets (12 x 8
thumbnails of 120x88 per sheet, three sheets).  Frame 0 is black (fade-in):
no face.  Frames 1-269 form four shots, and in every one of those frames the
main character's face is visible (frontal or three-quarter, both eyes
showing), so 269 frames have a visible face.  For each shot, MEGAMIND_SHOTS
gives the region of the frame where that face's center stays throughout
the shot, read off a 40-pixel grid drawn on the shot's first, middle and last
frames.  A frame counts as "face found" when one of the detections has its
center inside the region of its shot.  In shot 1 a second, smaller face -- a
man at a table in the background, right -- is visible too; its region is in
MEGAMIND_OTHER_FACES.  Detections in none of these regions are counted as
false positives.
"""

FACE_BOX = (183, 78, 269, 180)

MEGAMIND_FRAMES = 270
MEGAMIND_SHOTS = [
    # first frame, last frame, (x0, y0, x1, y1): region of the face center
    (1, 97, (180, 120, 380, 340)),     # Roxanne, medium shot, left of center
    (98, 153, (400, 120, 620, 360)),   # the man, three-quarter view, right
    (154, 199, (180, 100, 440, 360)),  # Roxanne, closer
    (200, 269, (220, 80, 600, 460)),   # the man, close-up, center
]
MEGAMIND_OTHER_FACES = [
    (1, 97, (400, 140, 540, 280)),     # the man in the background of shot 1
]


def iou(a, b):
    """IoU of two (x0, y0, x1, y1) boxes."""
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    area = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1])
    return inter / (area - inter)
