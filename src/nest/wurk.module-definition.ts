import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { WurkModuleOptions } from '../config/module-options';

/** `forRoot` / `forRootAsync` built by Nest's configurable module builder; the module is global. */
export const {
  ConfigurableModuleClass: WurkConfigurableModule,
  MODULE_OPTIONS_TOKEN: WURK_MODULE_OPTIONS,
  OPTIONS_TYPE: WURK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: WURK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<WurkModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
