/** The extension's icon (sidebar tab, settings editor, palette). */
import { LabIcon } from '@jupyterlab/ui-components';

import vramSvgStr from '../../style/icons/vram.svg';

export const vramIcon = new LabIcon({
  name: 'jupyterlab-vram:memory',
  svgstr: vramSvgStr
});
